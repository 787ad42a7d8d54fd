// Runs the client block of docs/protocols/ag-ui.md as written, in Node:
//
//   node snippet.mjs <modules dir> <doc> <server URL> <cookie> <csrf> <thread>
//
// The block's names are given (conversationId, csrfToken, reply); the page's fetch is
// the site's own (relative URLs, its cookie). Prints what the reply shows.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";

const [modules, doc, server, cookie, csrf, thread] = process.argv.slice(2);
const require = createRequire(join(modules, "package.json"));
const { HttpAgent } = require("@ag-ui/client");

const block = readFileSync(doc, "utf8").match(/```js\n([\s\S]*?)```/)[1];
const body = block.replace(/^import .*$/m, ""); // HttpAgent is given below
const siteFetch = globalThis.fetch;
globalThis.fetch = (url, init) =>
  siteFetch(new URL(url, server), { ...init, headers: { ...init.headers, Cookie: cookie } });

const reply = { textContent: "" };
const AsyncFunction = (async () => {}).constructor;
await new AsyncFunction("HttpAgent", "conversationId", "csrfToken", "reply", body)(
  HttpAgent, thread, csrf, reply,
);
process.stdout.write(JSON.stringify({ reply: reply.textContent }) + "\n");
