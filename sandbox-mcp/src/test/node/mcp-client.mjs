// A scenario run by the official TypeScript MCP SDK against a sandbox-mcp server, for TypeScriptClientIT.
// Usage: node mcp-client.mjs '<config JSON>'
//   config.transport: "stdio" (config.command, config.args: the server process this client starts) or
//                     "http" (config.url, config.headers)
//   config.scenario:  "oversize" (a write_file call of config.bytes bytes, then a small call)
//                     "cancel"   (a long run_command aborted by the caller, then what still runs)
// Prints one JSON object on stdout; the server's stderr goes to config.stderr (stdio).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createWriteStream } from 'node:fs';

const config = JSON.parse(process.argv[2]);
const out = {};

function transport() {
  if (config.transport === 'stdio') {
    const t = new StdioClientTransport({ command: config.command, args: config.args, stderr: 'pipe' });
    t.stderr.pipe(createWriteStream(config.stderr, { flags: 'a' }));
    return t;
  }
  return new StreamableHTTPClientTransport(new URL(config.url), { requestInit: { headers: config.headers ?? {} } });
}

function text(result) {
  return result.content.filter(c => c.type === 'text').map(c => c.text).join('\n');
}

async function waitFor(what, condition, ms) {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (await condition()) {
      return true;
    }
    await new Promise(r => setTimeout(r, 250));
  }
  throw new Error(`gave up waiting for ${what} after ${ms} ms`);
}

const client = new Client({ name: 'sandbox-mcp-ts-it', version: '1.0.0' });
const connection = transport();
await client.connect(connection);
const ps = async () => text(await client.callTool({ name: 'run_command', arguments: { command: 'ps -o args' } }));

try {
  if (config.scenario === 'oversize') {
    // The SDK writes "id" after "params": the server must find it at the end of a message it refuses unread.
    const started = Date.now();
    try {
      await client.callTool({ name: 'write_file', arguments: { path: 'a', content: 'x'.repeat(config.bytes) } },
        undefined, { timeout: config.timeoutMs });
      out.oversize = { ok: true };
    } catch (e) {
      out.oversize = { code: e.code, message: String(e.message), ms: Date.now() - started };
    }
    out.after = text(await client.callTool({ name: 'run_command', arguments: { command: 'echo still-alive' } }));
  } else if (config.scenario === 'cancel') {
    const abort = new AbortController();
    const running = client.callTool({ name: 'run_command', arguments: { command: 'sleep 300', timeout_seconds: 600 } },
      undefined, { signal: abort.signal, timeout: 600000 });
    const settled = running.then(() => null, e => e);
    await waitFor('sleep 300 to run', async () => (await ps()).includes('sleep 300'), 60000);
    abort.abort('the user stopped it');
    const e = await settled;
    out.aborted = { name: e?.name ?? null, message: String(e?.message) };
    try {
      await waitFor('sleep 300 to end', async () => !(await ps()).includes('sleep 300'), config.killWithinMs);
      out.killed = true;
    } catch (e2) {
      out.killed = false;
    }
    out.after = await ps();
  } else {
    throw new Error('unknown scenario ' + config.scenario);
  }
} finally {
  if (config.transport === 'http') {
    await connection.terminateSession(); // DELETE: the server ends the session and its unkeyed sandbox
  }
  await client.close();
}
process.stdout.write(JSON.stringify(out) + '\n');
