// Starts a real `gpufed run --listen 127.0.0.1:0` on a policy repository with a tokens
// file, reads the port it prints, and stops exactly that process (by its PID) again.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// Polls `check` (async, truthy when done) every `every` ms for at most `ms`; throws naming `what`.
export async function waitFor(what, check, { ms = 20000, every = 100 } = {}) {
  const deadline = Date.now() + ms;
  let last;
  for (;;) {
    try {
      const v = await check();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}${last ? `: ${last.message}` : ''}`);
    await new Promise(r => setTimeout(r, every));
  }
}

// tokens: {TOKEN: 'admin' | TENANT}. Returns {url, pid, get(path, token), stop(), log()}.
export async function startController({ gpufed, config, tokens, speed = '60', extraArgs = [] }) {
  const dir = mkdtempSync(join(tmpdir(), 'gpufed-ui-'));
  const tokensFile = join(dir, 'tokens');
  writeFileSync(tokensFile, Object.entries(tokens).map(([t, who]) => `${t} ${who}\n`).join(''), { mode: 0o600 });
  const args = ['run', '--config', config, '--state', join(dir, 'state'), '--listen', '127.0.0.1:0',
    '--tokens', tokensFile, '--speed', String(speed), ...extraArgs];
  const child = spawn(gpufed, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  let exited = null;
  child.stdout.resume();  // the live view; drained so the pipe never blocks the controller
  child.stderr.on('data', d => { stderr += d; });
  child.on('exit', (code, signal) => { exited = { code, signal }; });
  const stop = async () => {
    if (exited === null) {
      child.kill('SIGTERM');
      try {
        await waitFor('gpufed to exit after SIGTERM', () => exited !== null, { ms: 15000 });
      } catch {
        child.kill('SIGKILL');
        await waitFor('gpufed to exit after SIGKILL', () => exited !== null, { ms: 5000 });
      }
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const port = await waitFor('"gpufed run: API on http://127.0.0.1:PORT" on stderr', () => {
      if (exited) throw new Error(`gpufed exited (${JSON.stringify(exited)}): ${stderr}`);
      const m = /API on http:\/\/127\.0\.0\.1:(\d+)/.exec(stderr);
      return m && Number(m[1]);
    }, { ms: 30000 });
    const url = `http://127.0.0.1:${port}`;
    const get = async (path, token) => {
      const res = await fetch(url + path, { headers: token ? { Authorization: `Bearer ${token}` } : {} });
      const body = await res.text();
      let json = null;
      try { json = JSON.parse(body); } catch { /* not JSON */ }
      return { status: res.status, headers: res.headers, body, json };
    };
    return { url, pid: child.pid, get, stop, log: () => stderr };
  } catch (e) {
    await stop();
    throw e;
  }
}
