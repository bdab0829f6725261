// Steps on the dashboard shared by the tests and the screenshots.

export const PAGES = ['fleet', 'queue', 'tenants', 'decisions', 'audit'];
export const CHARTS = { fleet: ['gpu-allocation'], queue: ['queue-depth', 'wait'], tenants: ['spend'], decisions: [], audit: [] };

// Opens /ui/#token=TOKEN and waits until the fleet page shows.
// A link's token is only offered: the form is filled in and nothing is stored until the
// person presses Sign in.
export async function signInByFragment(page, url, token) {
  await page.goto(`${url}/ui/#token=${encodeURIComponent(token)}`, { waitUntil: 'load' });
  await page.waitForSelector('[data-testid="link-offer"]', { visible: true });
  const offered = await page.evaluate(() => ({
    stored: sessionStorage.getItem('gpufed.token'),
    field: document.querySelector('[data-testid="token"]').value,
  }));
  if (offered.stored !== null) throw new Error('a #token= link signed in without asking');
  if (offered.field !== token) throw new Error('the #token= link did not fill the sign-in form');
  await page.click('[data-testid="sign-in"]');
  await page.waitForSelector('[data-testid="fleet"]');
}

// Clicks the page's nav link and waits for the page and its first data.
export async function visit(page, name) {
  await page.click(`[data-testid="nav-${name}"]`);
  await page.waitForSelector(`[data-testid="${name}"]`);
  await page.waitForFunction(() => /live/.test(document.querySelector('[data-testid="status"]')?.textContent || ''));
  for (const chart of CHARTS[name]) await page.waitForSelector(`svg[data-chart="${chart}"] title`);
}

// What a chart drew: path data, bar and point counts, and whether it says "no data yet".
export async function chartState(page, name) {
  return page.$eval(`svg[data-chart="${name}"]`, svg => ({
    empty: svg.getAttribute('data-empty') === 'true',
    text: svg.textContent,
    paths: [...svg.querySelectorAll('path.series')].map(p => p.getAttribute('d')).filter(d => d && d.length > 1),
    bars: [...svg.querySelectorAll('rect.bar')].filter(r => Number(r.getAttribute('height')) > 0).length,
    points: svg.querySelectorAll('circle').length,
    axes: svg.querySelectorAll('.x-axis, .y-axis').length,
    axisTitles: [...svg.querySelectorAll('.axis-title')].map(t => t.textContent),
    legend: [...svg.querySelectorAll('.legend')].map(t => t.textContent),
  }));
}
