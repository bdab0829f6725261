// Screenshots of every dashboard page (fleet, queue, tenants, decisions, audit) at
// 1280x800, from a real `gpufed run` on the quickstart with an admin token.
// usage: node screenshots.mjs GPUFED SOURCE_DIR OUT_DIR   (scripts/screenshots.sh runs it)
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { startController, waitFor } from './lib/controller.mjs';
import { launch, openPage } from './lib/browser.mjs';
import { signInByFragment, visit } from './lib/dashboard.mjs';

const [gpufed, source, out] = process.argv.slice(2);
if (!gpufed || !source || !out) {
  console.error('usage: node screenshots.mjs GPUFED SOURCE_DIR OUT_DIR');
  process.exit(2);
}
mkdirSync(out, { recursive: true });
const admin = 'screenshot-admin-token-0123456789';
const controller = await startController({ gpufed, config: join(source, 'examples/quickstart'), tokens: { [admin]: 'admin' } });
const browser = await launch();
let rc = 0;
try {
  const { page, problems } = await openPage(browser);
  // Let the run build some history first, so the time charts have a shape.
  await waitFor('12 history samples', async () => ((await controller.get('/v1/history', admin)).json?.samples || []).length >= 12, { ms: 60000, every: 250 });
  await signInByFragment(page, controller.url, admin);
  for (const name of ['fleet', 'queue', 'tenants', 'decisions', 'audit']) {
    await visit(page, name);
    if (name === 'decisions') {
      await page.waitForSelector('[data-testid="decision-row"][data-outcome="placed"]');
      await page.click('[data-testid="decision-row"][data-outcome="placed"]');
      await page.waitForSelector('[data-testid="decision-detail"] [data-testid="verdict-row"]');
    }
    await page.screenshot({ path: join(out, `${name}.png`) });
    console.log(`screenshots: ${join(out, `${name}.png`)}`);
  }
  if (problems.length) {
    console.error(`screenshots: the page had problems:\n  ${problems.join('\n  ')}`);
    rc = 1;
  }
} catch (e) {
  console.error(`screenshots: ${e.stack || e}`);
  rc = 1;
} finally {
  await browser.close();
  await controller.stop();
}
process.exit(rc);
