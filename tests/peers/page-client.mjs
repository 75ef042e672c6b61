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
//   "steps": [{"op": "click", "selector": "#new-session"},
//             {"op": "fill", "selector": "#message", "text": "..."},
//             {"op": "press", "selector": "#message", "key": "Enter"},
//             {"op": "wait_text", "selector": "#conversation", "text": "..."},  // until it shows
//             {"op": "text", "selector": "..."},                                // prints it
//             {"op": "check", "selector": "..."},
//             {"op": "screenshot", "path": "/abs/file.png"},
//             {"op": "eval", "script": "(async () => …)()"}]                    // prints its value
// }
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
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
        await page.screenshot({ path: step.path, fullPage: true });
        break;
      case "eval":
        text = String(await page.evaluate(step.script));
        break;
      default:
        throw new Error(`unknown step ${step.op}`);
    }
    print({ kind: "step", step: index, op: step.op, text });
  }
} catch (error) {
  print({ kind: "failed", step: index, message: String(error.message ?? error) });
}
await browser.close();
rmSync(profile, { recursive: true, force: true });
