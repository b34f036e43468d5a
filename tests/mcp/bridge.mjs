// An HTTP front for `skillgate serve`, for the MCP conformance suite in
// tests/mcp_test.py. skillgate speaks MCP over stdio only; the suite speaks
// Streamable HTTP. This bridge is the SDK's own Streamable HTTP server
// transport on loopback, one `skillgate serve` per session, and it passes
// JSON-RPC messages through untouched in both directions: every answer the
// suite checks is skillgate's own. Session ids, SSE framing and the Host /
// Origin checks (DNS rebinding) are the SDK transport's.
//
// Usage: node bridge.mjs PATH/TO/skillgate
// Prints {"listening": port} on stdout once it accepts connections on
// 127.0.0.1, and {"session": id, "exit": {code, signal}} when a server ends.
// Ends on SIGTERM or when its stdin closes, taking its servers with it.
import http from "node:http";
import { randomUUID } from "node:crypto";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const skillgate = process.argv[2];
if (!skillgate) {
  console.error("usage: node bridge.mjs PATH/TO/skillgate");
  process.exit(2);
}

// A request body bigger than this is refused before it is parsed.
const MAX_BODY = 4 << 20;
// Sessions at once: every one is a process. Clients that never end theirs
// (the suite does not) lose the oldest first.
const MAX_SESSIONS = 32;

const env = {};
for (const [k, v] of Object.entries(process.env)) {
  if (typeof v === "string") env[k] = v;
}

function emit(obj) {
  process.stdout.write(JSON.stringify(obj) + "\n");
}

// session id -> { http, stdio, progress: Map(progressToken -> request id) }
const sessions = new Map();
let port = 0;

async function openSession() {
  const stdio = new StdioClientTransport({
    command: skillgate,
    args: ["serve"],
    env,
    stderr: "inherit",
  });
  const progress = new Map();
  const hosts = [`127.0.0.1:${port}`, `localhost:${port}`];
  const h = new StreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    enableDnsRebindingProtection: true,
    allowedHosts: hosts,
    allowedOrigins: hosts.map((x) => `http://${x}`),
    onsessioninitialized: (id) => {
      sessions.set(id, { http: h, stdio, progress });
    },
  });
  h.onmessage = (msg) => {
    const token = msg?.params?._meta?.progressToken;
    if (token !== undefined && msg.id !== undefined) progress.set(token, msg.id);
    stdio.send(msg).catch((e) => console.error(`bridge: to skillgate: ${e.message}`));
  };
  h.onclose = () => {
    stdio.close().catch(() => {});
  };
  stdio.onmessage = (msg) => {
    // A notification about a request goes on that request's stream.
    let related;
    if (msg.method === "notifications/progress") {
      related = progress.get(msg.params?.progressToken);
    } else if (msg.id !== undefined && msg.method === undefined) {
      for (const [t, id] of progress) if (id === msg.id) progress.delete(t);
    }
    h.send(msg, related === undefined ? undefined : { relatedRequestId: related })
      .catch((e) => console.error(`bridge: to client: ${e.message}`));
  };
  stdio.onclose = () => {
    const id = h.sessionId;
    emit({ session: id ?? null, exit: stdio._process?.exitCode ?? null });
    if (id) sessions.delete(id);
    h.close().catch(() => {});
  };
  await stdio.start();
  return h;
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    const parts = [];
    let size = 0;
    req.on("data", (c) => {
      size += c.length;
      if (size > MAX_BODY) {
        reject(new Error("request body too large"));
        req.destroy();
        return;
      }
      parts.push(c);
    });
    req.on("end", () => resolve(Buffer.concat(parts).toString("utf8")));
    req.on("error", reject);
  });
}

function fail(res, status, code, message) {
  if (res.headersSent) return;
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }));
}

const server = http.createServer(async (req, res) => {
  try {
    const url = new URL(req.url, "http://127.0.0.1");
    if (url.pathname !== "/mcp") return fail(res, 404, -32601, "not found: use /mcp");
    let body;
    if (req.method === "POST") {
      const text = await readBody(req);
      try {
        body = JSON.parse(text);
      } catch {
        return fail(res, 400, -32700, "Parse error");
      }
    }
    const sid = req.headers["mcp-session-id"];
    let s = typeof sid === "string" ? sessions.get(sid) : undefined;
    let h = s?.http;
    if (!h) {
      if (typeof sid === "string") return fail(res, 404, -32001, "Session not found");
      const first = Array.isArray(body) ? body[0] : body;
      if (req.method !== "POST" || first?.method !== "initialize") {
        return fail(res, 400, -32000, "Bad Request: no session; send initialize first");
      }
      if (sessions.size >= MAX_SESSIONS) {
        const [oldest, s] = sessions.entries().next().value;
        sessions.delete(oldest);
        await s.http.close();
      }
      h = await openSession();
      await h.handleRequest(req, res, body);
      // Refused before a session began (a bad Host, say): no server is kept.
      if (!h.sessionId) await h.close();
      return;
    }
    await h.handleRequest(req, res, body);
  } catch (e) {
    console.error(`bridge: ${e.stack ?? e}`);
    fail(res, 500, -32603, "Internal error");
  }
});

function shutdown() {
  for (const s of sessions.values()) s.stdio.close().catch(() => {});
  server.close();
  setTimeout(() => process.exit(0), 500).unref();
}
process.on("SIGTERM", shutdown);
process.stdin.on("end", shutdown);
process.stdin.resume();

server.listen(0, "127.0.0.1", () => {
  port = server.address().port;
  emit({ listening: port });
});
