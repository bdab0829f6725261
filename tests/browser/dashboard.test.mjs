// The /ui dashboard in a real browser (Debian's Chromium through puppeteer-core) against a
// real `gpufed run` on the quickstart: sign-in (form and #token= fragment), every page and
// data-testid, the content against the API's own answers, drawn charts, tenant scoping,
// decision drill-down, the error banner, and no console errors or failed requests.
// Run by run.sh (CTest: browser_dashboard_test). Env: GPUFED, GPUFED_SOURCE_DIR,
// GPUFED_ARTIFACTS (screenshots go there), GPUFED_BROWSER_MODULES (puppeteer-core).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { startController, waitFor } from './lib/controller.mjs';
import { launch, openPage } from './lib/browser.mjs';
import { CHARTS, PAGES, chartState, signInByFragment, visit } from './lib/dashboard.mjs';

const ADMIN = 'browser-admin-token-0123456789';
const NLP = 'browser-nlp-token-0123456789';  // tenant team-nlp
const artifacts = process.env.GPUFED_ARTIFACTS || join(process.cwd(), 'browser-artifacts');
mkdirSync(artifacts, { recursive: true });

let controller;
let browser;

before(async () => {
  controller = await startController({
    gpufed: process.env.GPUFED,
    config: join(process.env.GPUFED_SOURCE_DIR, 'examples/quickstart'),
    tokens: { [ADMIN]: 'admin', [NLP]: 'team-nlp' },
  });
  browser = await launch();
  // A few passes first, so the history has samples and the queue has waiting work.
  await waitFor('3 history samples', async () => ((await controller.get('/v1/history', ADMIN)).json?.samples || []).length >= 3);
});

after(async () => {
  if (browser) await browser.close();
  if (controller) await controller.stop();
});

// Compares what the page shows with what the API answers, again and again until they agree
// (both move while the simulation runs), for at most 20 s.
async function agrees(what, read, fetch) {
  let last;
  await waitFor(what, async () => {
    const [shown, answer] = [await read(), await fetch()];
    last = { shown, answer };
    return JSON.stringify(shown) === JSON.stringify(answer);
  }, { ms: 20000, every: 500 }).catch(e => {
    throw new Error(`${e.message}; last: ${JSON.stringify(last)}`);
  });
}

const attr = (page, selector, name) => page.$$eval(selector, (els, n) => els.map(e => e.getAttribute(n)), name);
const sorted = xs => [...xs].sort();
const api = async (path, token = ADMIN) => {
  const r = await controller.get(path, token);
  assert.equal(r.status, 200, `${path}: ${r.body}`);
  return r.json;
};

test('assets are served without a token, with a strict CSP; everything else still needs one', async () => {
  for (const path of ['/ui', '/ui/', '/ui/app.js', '/ui/charts.js', '/ui/style.css']) {
    const r = await controller.get(path);
    assert.equal(r.status, 200, path);
    const csp = r.headers.get('content-security-policy');
    assert.match(csp, /default-src 'self'/, path);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/, path);
    assert.equal(r.headers.get('x-content-type-options'), 'nosniff', path);
    assert.equal(r.headers.get('cache-control'), 'no-cache', path);
    const again = await fetch(controller.url + path, { headers: { 'If-None-Match': r.headers.get('etag') } });
    assert.equal(again.status, 304, `${path} revalidates with its ETag`);
  }
  assert.match((await controller.get('/ui/app.js')).headers.get('content-type'), /^text\/javascript/);
  const root = await fetch(`${controller.url}/`, { redirect: 'manual' });
  assert.equal(root.status, 302);
  assert.equal(new URL(root.headers.get('location'), controller.url).pathname, '/ui/');
  for (const path of ['/ui/nope.js', '/ui/../v1/clusters', '/v1/clusters', '/v1/queue', '/metrics']) {
    assert.equal((await controller.get(path)).status, 401, `${path} without a token`);
  }
});

test('admin signs in with the form and sees every page, its rows and drawn charts', async () => {
  const { page, problems, requests } = await openPage(browser);
  await page.goto(`${controller.url}/ui/`, { waitUntil: 'load' });
  await page.waitForSelector('[data-testid="token"]', { visible: true });
  await page.type('[data-testid="token"]', ADMIN);
  await page.click('[data-testid="sign-in"]');
  await page.waitForSelector('[data-testid="fleet"]');
  assert.equal(await page.evaluate(() => sessionStorage.getItem('gpufed.token')), ADMIN);

  for (const name of PAGES) {
    await visit(page, name);
    for (const chart of CHARTS[name]) {
      const s = await waitFor(`chart ${chart} to draw data`, async () => {
        const c = await chartState(page, chart);
        return !c.empty && (c.paths.length > 0 || c.bars > 0) ? c : null;
      });
      assert.equal(s.axes, 2, `${chart} has two axes`);
      assert.equal(s.axisTitles.filter(Boolean).length, 2, `${chart} titles both axes`);
      assert.ok(s.legend.length > 0, `${chart} has a legend`);
    }
    await page.screenshot({ path: join(artifacts, `admin-${name}.png`) });
  }

  await visit(page, 'fleet');
  await agrees('cluster rows to match /v1/clusters',
    async () => sorted(await attr(page, '[data-testid="cluster-row"]', 'data-cluster')),
    async () => sorted((await api('/v1/clusters')).items.map(c => c.name)));
  const clusters = (await api('/v1/clusters')).items;
  const models = await page.$$eval('[data-testid="cluster-model"]', els => els.length);
  assert.equal(models, clusters.reduce((n, c) => n + (c.models || []).length, 0), 'one line per cluster and GPU model');
  const gpuLines = (await chartState(page, 'gpu-allocation')).paths.length;
  assert.equal(gpuLines, clusters.length, 'one allocation line per cluster');

  await visit(page, 'queue');
  await agrees('queue rows (in position order) to match /v1/queue',
    async () => page.$$eval('[data-testid="queue-row"]', rows => rows.map(r => `${r.dataset.tenant}/${r.dataset.workload}`)),
    async () => (await api('/v1/queue')).items.sort((a, b) => a.position - b.position).map(w => `${w.tenant}/${w.name}`));

  await visit(page, 'tenants');
  await agrees('tenant rows to match /v1/tenants',
    async () => sorted(await attr(page, '[data-testid="tenant-row"]', 'data-tenant')),
    async () => sorted((await api('/v1/tenants')).items.map(t => t.name)));
  assert.equal((await attr(page, '[data-testid="tenant-row"]', 'data-tenant')).length, 3, 'the quickstart has three tenants');

  await visit(page, 'audit');
  await page.waitForSelector('[data-testid="audit-head"]');
  await page.waitForSelector('[data-testid="audit-checkpoint"]');
  await agrees('the journal head to match /v1/audit',
    async () => (await page.$eval('[data-testid="audit-head"] .tile-value', e => e.textContent)),
    async () => `#${(await api('/v1/audit')).head.seq}`);

  await visit(page, 'decisions');
  await page.waitForSelector('[data-testid="decision-row"]');
  await agrees('decision rows (newest first) to match /v1/decisions',
    async () => page.$$eval('[data-testid="decision-row"]', rows => rows.map(r => `${r.dataset.tenant}/${r.dataset.workload}/${r.dataset.outcome}`)),
    async () => (await api('/v1/decisions')).items.map(d => `${d.tenant}/${d.workload}/${d.outcome}`));
  const decisions = (await api('/v1/decisions')).items;
  // Search narrows the list to the matching decisions.
  const target = decisions.find(d => d.outcome === 'placed' && Array.isArray(d.verdicts) && d.verdicts.length > 1);
  assert.ok(target, 'the quickstart has a placed decision with several verdicts');
  await page.type('[data-testid="decision-search"]', target.workload);
  await waitFor('the search to filter', async () => {
    const names = await attr(page, '[data-testid="decision-row"]', 'data-workload');
    return names.length > 0 && names.every(n => n.includes(target.workload));
  });
  // Drill-down: the clicked decision's verdicts per cluster, and the explain endpoint's lines.
  await page.click(`[data-testid="decision-row"][data-workload="${target.workload}"][data-outcome="placed"]`);
  await page.waitForSelector('[data-testid="decision-detail"] [data-testid="verdict-row"]');
  const explain = await api(`/v1/tenants/${target.tenant}/workloads/${target.workload}/explain`);
  const shownVerdicts = await attr(page, '[data-testid="decision-detail"] [data-testid="verdict-row"]', 'data-cluster');
  const record = (await api('/v1/decisions')).items.find(d => d.workload === target.workload && d.tenant === target.tenant && d.outcome === 'placed');
  assert.deepEqual(sorted(shownVerdicts), sorted(record.verdicts.map(v => v.cluster)));
  assert.ok((await page.$$('[data-testid="decision-detail"] [data-testid="score-total"]')).length > 0, 'eligible clusters show a score');
  assert.ok((await page.$$('[data-testid="decision-detail"] [data-testid="score-part"]')).length > 0, 'and its breakdown');
  const why = await page.$$eval('[data-testid="decision-why"] li', els => els.map(e => e.textContent));
  assert.deepEqual(why, explain.why);
  await page.screenshot({ path: join(artifacts, 'admin-decision-detail.png') });

  // Every API call carried the token as a bearer header; none carried it in the URL.
  const apiCalls = requests.filter(r => new URL(r.url).pathname.startsWith('/v1/'));
  assert.ok(apiCalls.length > 0);
  for (const r of apiCalls) assert.equal(r.headers.authorization, `Bearer ${ADMIN}`, r.url);
  assert.ok(requests.every(r => !r.url.includes(ADMIN)), 'the token never appears in a URL');

  // Sign-out stops polling and forgets the token.
  await page.click('[data-testid="sign-out"]');
  await page.waitForSelector('[data-testid="token"]', { visible: true });
  assert.equal(await page.evaluate(() => sessionStorage.getItem('gpufed.token')), null);
  const before = requests.length;
  // An observation window one poll interval long (5 s) plus a margin, not a synchronisation.
  await new Promise(r => setTimeout(r, 6000));
  assert.deepEqual(requests.slice(before).filter(r => new URL(r.url).pathname.startsWith('/v1/')).map(r => r.url), []);
  assert.deepEqual(problems, []);
});

test('a tenant token from the #token= fragment sees its own tenant only', async () => {
  const { page, problems, requests } = await openPage(browser);
  await signInByFragment(page, controller.url, NLP);
  assert.ok(!page.url().includes(NLP), `the fragment is removed from the address: ${page.url()}`);
  assert.match(new URL(page.url()).hash, /^#\/fleet$/);
  assert.equal(await page.evaluate(() => sessionStorage.getItem('gpufed.token')), NLP);

  await visit(page, 'tenants');
  await agrees('the tenant page to list team-nlp only',
    async () => attr(page, '[data-testid="tenant-row"]', 'data-tenant'),
    async () => (await api('/v1/tenants', NLP)).items.map(t => t.name));
  assert.deepEqual(await attr(page, '[data-testid="tenant-row"]', 'data-tenant'), ['team-nlp']);
  await page.screenshot({ path: join(artifacts, 'tenant-tenants.png') });

  await visit(page, 'queue');
  assert.ok((await attr(page, '[data-testid="queue-row"]', 'data-tenant')).every(t => t === 'team-nlp'));
  await visit(page, 'decisions');
  await page.waitForSelector('[data-testid="decision-row"]');
  await agrees('the decisions to be team-nlp\'s, as many as the API gives the tenant',
    async () => (await attr(page, '[data-testid="decision-row"]', 'data-tenant')).length,
    async () => (await api('/v1/decisions', NLP)).items.length);
  const tenants = new Set(await attr(page, '[data-testid="decision-row"]', 'data-tenant'));
  assert.deepEqual([...tenants], ['team-nlp']);
  await page.screenshot({ path: join(artifacts, 'tenant-decisions.png') });
  // A fragment is never sent: no request line carried the token (only the bearer header did).
  assert.deepEqual(requests.map(r => r.url.split('#')[0]).filter(u => u.includes(NLP)), []);
  assert.ok(!controller.log().includes(NLP), 'the token is not in the controller\'s log');
  assert.deepEqual(problems, []);
});

test('a refused token shows the error banner and the sign-in form', async () => {
  const { page, problems } = await openPage(browser);
  await page.goto(`${controller.url}/ui/#token=not-a-valid-token-000000`, { waitUntil: 'load' });
  await page.waitForSelector('[data-testid="link-offer"]', { visible: true });
  await page.click('[data-testid="sign-in"]');
  await page.waitForSelector('[data-testid="error-banner"]:not([hidden])');
  assert.match(await page.$eval('[data-testid="error-banner"]', e => e.textContent), /401/);
  await page.waitForSelector('[data-testid="token"]', { visible: true });
  assert.equal(await page.evaluate(() => sessionStorage.getItem('gpufed.token')), null);
  // The refused call itself is the only problem: the 401 and the browser's note about it.
  assert.deepEqual(problems.filter(p => !/401/.test(p)), []);
});

test('a controller that stops answering shows the error banner, keeping the last data', async () => {
  const { page, problems } = await openPage(browser);
  await signInByFragment(page, controller.url, ADMIN);
  await page.waitForSelector('[data-testid="cluster-row"]');
  await controller.stop();
  await page.waitForSelector('[data-testid="error-banner"]:not([hidden])', { timeout: 15000 });
  assert.match(await page.$eval('[data-testid="error-banner"]', e => e.textContent), /No answer|HTTP 5/);
  assert.ok((await page.$$('[data-testid="cluster-row"]')).length > 0, 'the last data stays on the page');
  await page.screenshot({ path: join(artifacts, 'admin-error-banner.png') });
  assert.deepEqual(problems.filter(p => !/requestfailed|ERR_CONNECTION_REFUSED|Failed to fetch/.test(p)), []);
});
