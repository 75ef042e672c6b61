// Drives `agentry serve`'s web page in headless Chromium (Debian's, through playwright-core),
// for agentry's end-to-end tests.
//
//   node tests/peers/page-client.mjs SCENARIO.json
//
// It prints one JSON line per step: {"kind": "step", "step": n, "op": ..., "text": ...}, and
// {"kind": "failed", "step": n, "message": ...} when a step fails (the run stops there).
//
// It first prints {"kind": "loaded", "status": N}: the HTTP status of the page.
//
// Scenario: {
//   "url": "http://127.0.0.1:PORT/",
//   "hostResolverRules": "MAP rebind.test 127.0.0.1",                 // optional: names rebound
//   "colorScheme": "dark",                                            // optional: light by default
//   "steps": [{"op": "click", "selector": "#new-session"},
//             {"op": "fill", "selector": "#message", "text": "..."},
//             {"op": "press", "selector": "#message", "key": "Enter"},
//             {"op": "wait_text", "selector": "#conversation", "text": "..."},  // until it shows
//             {"op": "text", "selector": "..."},                                // prints it
//             {"op": "check", "selector": "..."},
//             {"op": "screenshot", "path": "/abs/file.png", "fit": "pre"},     // fit: optional selector
//             {"op": "eval", "script": "(async () => …)()"},                   // prints its value
//             {"op": "select", "selector": "#model", "value": "..."},
//             {"op": "files", "selector": "#attach", "paths": ["/abs/file"]},
//             {"op": "paste_file", "selector": "#message", "name": "a.txt", "type": "text/plain", "text": "..."},
//             {"op": "drop_file", "selector": "#composer", "name": "a.png", "type": "image/png", "base64": "..."},
//             {"op": "wait", "ms": 500},
//             {"op": "axe"}]                    // prints axe-core's violations as JSON
// }
//
// At the end it prints {"kind": "network", "requests": [every URL the page asked for],
// "failures": [{"url", "status"} of each answer of 400 or more], "blocked": [{"url", "error"}
// of each request that got no answer (refused by the page's CSP, say)], "console": [errors]}.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";

const scenario = JSON.parse(readFileSync(process.argv[2], "utf8"));
const print = (record) => process.stdout.write(JSON.stringify(record) + "\n");

// This machine's network is closed: Chromium must not try to reach outside hosts.
// A fresh profile every run, removed at the end.
const profile = mkdtempSync(join(tmpdir(), "agentry-chromium-"));
const browser = await chromium.launchPersistentContext(profile, {
  executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
  headless: true,
  colorScheme: scenario.colorScheme ?? "light",
  args: [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    ...(scenario.hostResolverRules ? [`--host-resolver-rules=${scenario.hostResolverRules}`] : []),
  ],
});
const page = browser.pages()[0] ?? (await browser.newPage());
page.setDefaultTimeout(20000);
const network = { kind: "network", requests: [], failures: [], blocked: [], console: [] };
page.on("request", (request) => network.requests.push(request.url()));
page.on("requestfailed", (request) => network.blocked.push({ url: request.url(), error: request.failure()?.errorText }));
page.on("response", (response) => {
  if (response.status() >= 400) network.failures.push({ url: response.url(), status: response.status() });
});
page.on("console", (message) => {
  if (message.type() === "error") network.console.push(message.text());
});
const loaded = await page.goto(scenario.url);
print({ kind: "loaded", status: loaded?.status() ?? null });

let index = 0;
try {
  for (const step of scenario.steps) {
    index += 1;
    let text;
    switch (step.op) {
      case "click":
        await page.click(step.selector);
        break;
      case "check":
        await page.check(step.selector);
        break;
      case "fill":
        await page.fill(step.selector, step.text);
        break;
      case "press":
        await page.press(step.selector, step.key);
        break;
      case "wait_text":
        await page.locator(step.selector, { hasText: step.text }).first().waitFor();
        break;
      case "text":
        text = await page.locator(step.selector).first().textContent();
        break;
      case "screenshot":
        // With "fit": a selector, only that element.
        if (step.fit) await page.locator(step.fit).screenshot({ path: step.path });
        else await page.screenshot({ path: step.path, fullPage: true });
        break;
      case "eval":
        text = String(await page.evaluate(step.script));
        break;
      case "select":
        await page.selectOption(step.selector, step.value);
        break;
      case "files":
        await page.setInputFiles(step.selector, step.paths);
        break;
      case "paste_file":
      case "drop_file":
        // A paste or a drop carrying a file (text, or base64 bytes), as the system gives one.
        await page.locator(step.selector).evaluate((target, step) => {
          const bytes = step.base64 ? Uint8Array.from(atob(step.base64), (c) => c.charCodeAt(0)) : step.text;
          const data = new DataTransfer();
          data.items.add(new File([bytes], step.name, { type: step.type }));
          const init = { bubbles: true, cancelable: true };
          const event = step.op === "paste_file"
            ? new ClipboardEvent("paste", { ...init, clipboardData: data })
            : new DragEvent("drop", { ...init, dataTransfer: data });
          target.dispatchEvent(event);
        }, step);
        break;
      case "wait":
        await page.waitForTimeout(step.ms);
        break;
      case "axe": {
        // Evaluated through the debugging protocol, which the page's CSP does not govern.
        const source = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
        await page.evaluate(source);
        const results = await page.evaluate(async () => (await window.axe.run()).violations.map(
          (v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(" ")) })));
        text = JSON.stringify(results);
        break;
      }
      default:
        throw new Error(`unknown step ${step.op}`);
    }
    print({ kind: "step", step: index, op: step.op, text });
  }
} catch (error) {
  print({ kind: "failed", step: index, message: String(error.message ?? error) });
}
print(network);
await browser.close();
rmSync(profile, { recursive: true, force: true });
