// An OTLP/HTTP receiver for the OpenTelemetry tests: decodes each request
// with the official OTLP definitions (@opentelemetry/otlp-transformer's
// generated code) and writes one JSON line per span to OUT, with the time
// it arrived and the request's headers.
//   node receiver.mjs PORT MODE OUT    MODE: ok | 500 | hang
// Listens on 127.0.0.1 only; prints "listening" once ready. Ends when its
// parent closes stdin, or after 120 s at most.
import { createServer } from "node:http";
import { appendFileSync } from "node:fs";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const root = require("@opentelemetry/otlp-transformer/build/src/generated/root.js");
const Req = root.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
const Res = root.opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse;

const [port, mode, out] = process.argv.slice(2);
const hex = (b) => Buffer.from(b || []).toString("hex");
const value = (v) => {
  if (!v) return null;
  if (v.stringValue !== undefined && v.stringValue !== null && v.value === "stringValue") return v.stringValue;
  switch (v.value) {
    case "stringValue": return v.stringValue;
    case "boolValue": return v.boolValue;
    case "intValue": return Number(v.intValue);
    case "doubleValue": return v.doubleValue;
    default: return `<${v.value}>`;
  }
};
const attrs = (list) => Object.fromEntries((list || []).map((kv) => [kv.key, value(kv.value)]));

const server = createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    const arrived = Date.now();
    if (mode === "hang") return; // never answers
    let msg;
    try {
      msg = Req.decode(Buffer.concat(chunks));
    } catch (e) {
      appendFileSync(out, JSON.stringify({ error: String(e), arrived }) + "\n");
      res.writeHead(400).end();
      return;
    }
    for (const rs of msg.resourceSpans) {
      const resource = attrs(rs.resource && rs.resource.attributes);
      for (const ss of rs.scopeSpans) {
        for (const s of ss.spans) {
          appendFileSync(out, JSON.stringify({
            arrived, path: req.url, content_type: req.headers["content-type"],
            headers: req.headers, resource, scope: ss.scope && ss.scope.name,
            trace_id: hex(s.traceId), span_id: hex(s.spanId), parent_span_id: hex(s.parentSpanId),
            name: s.name, kind: s.kind,
            start_ns: String(s.startTimeUnixNano), end_ns: String(s.endTimeUnixNano),
            attributes: attrs(s.attributes), dropped_attributes: s.droppedAttributesCount,
            events: (s.events || []).map((e) => ({ name: e.name, time_ns: String(e.timeUnixNano),
                                                   attributes: attrs(e.attributes) })),
            dropped_events: s.droppedEventsCount,
            status: s.status ? { code: s.status.code, message: s.status.message } : null,
          }) + "\n");
        }
      }
    }
    if (mode === "500") {
      res.writeHead(500).end("no");
      return;
    }
    res.writeHead(200, { "content-type": "application/x-protobuf" });
    res.end(Buffer.from(Res.encode(Res.create({})).finish()));
  });
});
server.listen(Number(port), "127.0.0.1", () => console.log("listening"));
process.stdin.on("end", () => process.exit(0));
process.stdin.resume();
setTimeout(() => process.exit(0), 120000).unref();
