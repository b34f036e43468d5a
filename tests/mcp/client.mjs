// Drives `skillgate serve` with the official MCP TypeScript SDK, for
// tests/mcp_test.py. Prints one JSON object per line on stdout; the python
// side asserts on them.
//
// Usage: node client.mjs PATH/TO/skillgate SCENARIO [ARG]
//
//   handshake     connect, then print
//                   {"connected": {server, protocol_version, capabilities, instructions}}
//                   {"tools": [...tools/list...]}
//                   {"ping": {...}}
//   calls JSON    connect, print {"connected": ...}, then call each tool of JSON,
//                 an array of [name, arguments], one after the other, printing
//                 {"call": i, "tool": name, "started": true} before each and
//                 {"call": i, "tool": name, "result": CallToolResult, "ms": n}
//                 or {"call": i, "tool": name, "error": {code, message}, "ms": n} after it
//
// With MCP_TEST_ROOTS (a JSON array of file:// URIs) in its environment the
// client declares the roots capability and answers roots/list with them,
// printing {"roots_listed": n} each time (n: how many times so far); the
// variable is not passed on to the server.
//
// Always last: {"done": true, "server_exit": {code, signal} or null,
// "stderr": <what the server wrote on stderr>, "transport_errors": [...]} (a line on the server's stdout that is not a
// JSON-RPC message shows up in transport_errors). The server gets this
// process's environment as it is (the python side isolates it), and is
// closed by closing its stdin. Exit status 0 unless the driver itself failed
// (a failed tool call is a result line, not a failure here).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ListRootsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const [skillgate, scenario, arg] = process.argv.slice(2);
if (!skillgate || !scenario) {
  console.error("usage: node client.mjs PATH/TO/skillgate handshake|calls [JSON]");
  process.exit(2);
}

// A run may wait for a person at the TUI; the python side bounds it anyway.
const CALL_TIMEOUT_MS = 120000;

function emit(obj) {
  process.stdout.write(JSON.stringify(obj) + "\n");
}

const env = {};
for (const [k, v] of Object.entries(process.env)) {
  if (typeof v === "string" && k !== "MCP_TEST_ROOTS") env[k] = v;
}
const roots = process.env.MCP_TEST_ROOTS ? JSON.parse(process.env.MCP_TEST_ROOTS) : null;

const transport = new StdioClientTransport({
  command: skillgate,
  args: ["serve"],
  env,
  stderr: "pipe",
});
let stderr = "";
transport.stderr?.on("data", (chunk) => {
  stderr += chunk.toString();
});
// The SDK hands the negotiated version to a transport that wants it.
let negotiated = null;
transport.setProtocolVersion = (v) => {
  negotiated = v;
};

const transportErrors = [];
const client = new Client(
  { name: "skillgate-mcp-test", version: "1.0.0" },
  roots ? { capabilities: { roots: { listChanged: true } } } : undefined,
);
let rootsListed = 0;
if (roots) {
  client.setRequestHandler(ListRootsRequestSchema, async () => {
    emit({ roots_listed: ++rootsListed });
    return { roots: roots.map((uri) => ({ uri })) };
  });
}
client.onerror = (e) => transportErrors.push(String(e?.message ?? e));

// How the server ended once its stdin was closed (null: still running).
let serverExit = null;

async function main() {
  await client.connect(transport, { timeout: 20000 });
  transport._process?.once("exit", (code, signal) => {
    serverExit = { code, signal };
  });
  emit({
    connected: {
      server: client.getServerVersion() ?? null,
      protocol_version: negotiated,
      capabilities: client.getServerCapabilities() ?? null,
      instructions: client.getInstructions() ?? null,
    },
  });
  if (scenario === "handshake") {
    const tools = await client.listTools(undefined, { timeout: 20000 });
    emit({ tools: tools.tools });
    emit({ ping: await client.ping({ timeout: 20000 }) });
  } else if (scenario === "calls") {
    // the tools' outputSchemas: the SDK then checks every structuredContent
    await client.listTools(undefined, { timeout: 20000 });
    const calls = JSON.parse(arg ?? "[]");
    for (let i = 0; i < calls.length; i++) {
      const [name, args] = calls[i];
      emit({ call: i, tool: name, started: true });
      const t0 = Date.now();
      try {
        const result = await client.callTool({ name, arguments: args ?? {} }, undefined, {
          timeout: CALL_TIMEOUT_MS,
        });
        emit({ call: i, tool: name, result, ms: Date.now() - t0 });
      } catch (e) {
        emit({
          call: i,
          tool: name,
          error: { code: e?.code ?? null, message: String(e?.message ?? e) },
          ms: Date.now() - t0,
        });
      }
    }
  } else {
    throw new Error(`unknown scenario ${scenario}`);
  }
}

let failed = false;
try {
  await main();
} catch (e) {
  failed = true;
  emit({ fatal: String(e?.stack ?? e) });
}
try {
  await client.close();
} catch (e) {
  transportErrors.push(`close: ${e?.message ?? e}`);
}
emit({ done: true, server_exit: serverExit, stderr, transport_errors: transportErrors });
process.exitCode = failed ? 1 : 0;
