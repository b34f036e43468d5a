// Loads `skillgate traces report` HTML pages in a real browser (Debian's
// headless chromium, driven by puppeteer-core) for tests/report_test.py.
//
// Usage: node check.mjs CHROMIUM SCREENSHOT_DIR PAGE.html...
//
// Every request but the page's own file:// URL is refused (request
// interception), and chromium is started with its background networking
// off and every host name mapped to nothing, so nothing leaves the
// machine. For each page, one JSON line: the console's errors and
// warnings, the page's errors, the dialogs opened, whether any script
// ran (window.__pwned, the hostile payloads' marker), the requests
// refused, the ids of the sections, the count of script, img, a[href],
// iframe, object and on* attributes, and the screenshot's path.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import url from "node:url";
import puppeteer from "puppeteer-core";

const [chromium, shots, ...pages] = process.argv.slice(2);
const STEP_MS = 20000; // every wait is bounded

const profile = fs.mkdtempSync(path.join(os.tmpdir(), "sgreport-chromium."));
const browser = await puppeteer.launch({
  executablePath: chromium,
  headless: true,
  timeout: STEP_MS,
  protocolTimeout: STEP_MS,
  userDataDir: profile,
  args: [
    "--no-sandbox", // the test may run as root; the page is a local file with network off
    "--disable-gpu",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
    "--host-resolver-rules=MAP * ~NOTFOUND",
    "--proxy-server=127.0.0.1:9",
    "--proxy-bypass-list=<-loopback>",
  ],
});

try {
  for (const file of pages) {
    const page = await browser.newPage();
    page.setDefaultTimeout(STEP_MS);
    await page.setViewport({ width: 1200, height: 900 });
    const own = url.pathToFileURL(path.resolve(file)).href;
    const r = { file, console: [], pageErrors: [], dialogs: [], refused: [] };
    page.on("console", (m) => {
      if (m.type() === "error" || m.type() === "warn" || m.type() === "warning")
        r.console.push(`${m.type()}: ${m.text()}`);
    });
    page.on("pageerror", (e) => r.pageErrors.push(String(e)));
    page.on("dialog", async (d) => {
      r.dialogs.push(`${d.type()}: ${d.message()}`);
      await d.dismiss().catch(() => {});
    });
    await page.setRequestInterception(true);
    page.on("request", (q) => {
      if (q.url() === own) q.continue();
      else {
        r.refused.push(q.url().slice(0, 200));
        q.abort("blockedbyclient");
      }
    });
    await page.goto(own, { waitUntil: "load", timeout: STEP_MS });
    Object.assign(
      r,
      await page.evaluate(() => ({
        pwned: window.__pwned !== undefined,
        title: document.title,
        sections: [...document.querySelectorAll("section[id]")].map((s) => s.id),
        headings: [...document.querySelectorAll("h2")].map((h) => h.textContent),
        scripts: document.querySelectorAll("script").length,
        images: document.querySelectorAll("img").length,
        links: document.querySelectorAll("a[href]").length,
        frames: document.querySelectorAll("iframe, object, embed").length,
        handlers: [...document.querySelectorAll("*")].filter((el) =>
          [...el.attributes].some((a) => a.name.startsWith("on"))).length,
        svg: document.querySelectorAll("#timeline svg").length,
        csp: document.querySelector('meta[http-equiv="Content-Security-Policy"]')?.content ?? "",
        styled: getComputedStyle(document.body).fontFamily,
        text: document.body.innerText.slice(0, 400000),
      })),
    );
    r.screenshot = path.join(shots, path.basename(file).replace(/\.html$/, "") + ".png");
    await page.screenshot({ path: r.screenshot, fullPage: true });
    const timeline = await page.$("#timeline");
    if (timeline) {
      r.timelineShot = r.screenshot.replace(/\.png$/, "-timeline.png");
      await timeline.screenshot({ path: r.timelineShot });
    }
    process.stdout.write(JSON.stringify(r) + "\n");
    await page.close();
  }
} finally {
  await browser.close();
  fs.rmSync(profile, { recursive: true, force: true });
}
