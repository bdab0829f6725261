// Launches Debian's Chromium through puppeteer-core (never a downloaded browser) with the
// flags tested in ../shared/recipes/headless-browser.md, and records every problem a page
// shows: uncaught errors, console.error, failed requests and HTTP errors.
import { createRequire } from 'node:module';

// puppeteer-core lives in GPUFED_BROWSER_MODULES (a folder whose node_modules has it;
// run.sh installs it there from package-lock.json), or beside these scripts.
const require = createRequire(process.env.GPUFED_BROWSER_MODULES ? `${process.env.GPUFED_BROWSER_MODULES}/` : import.meta.url);
const puppeteer = require('puppeteer-core');

export const VIEWPORT = { width: 1280, height: 800 };

export async function launch() {
  // puppeteer gives each launch a fresh temporary profile, so no cached asset survives.
  return puppeteer.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--disable-quic', '--hide-scrollbars'],
    timeout: 30000,
  });
}

// A new page of 1280x800 in its own browser context (its own sessionStorage); `problems`
// collects what went wrong, `allowed(problem)` filters problems a test provokes on purpose.
export async function openPage(browser) {
  const context = await browser.createBrowserContext();
  const page = await context.newPage();
  await page.setViewport(VIEWPORT);
  page.setDefaultTimeout(20000);
  const problems = [];
  const requests = [];
  page.on('pageerror', e => problems.push(`pageerror: ${e.message}`));
  page.on('console', m => { if (m.type() === 'error') problems.push(`console.error: ${m.text()}`); });
  page.on('requestfailed', r => problems.push(`requestfailed: ${r.url()} ${r.failure()?.errorText}`));
  page.on('request', r => requests.push({ url: r.url(), headers: r.headers() }));
  page.on('response', r => { if (r.status() >= 400) problems.push(`HTTP ${r.status()}: ${r.url()}`); });
  return { page, context, problems, requests };
}
