// The dashboard's entry point: sign-in and sign-out, the hash routes (#/fleet, #/queue,
// #/tenants, #/decisions, #/audit), polling the current page, and the error banner.
import { ApiError, makeApi } from './api.js';
import { Session } from './session.js';
import { replaceChildren } from './dom.js';
import { HistoryCache } from './history.js';
import { createFleetPage } from './fleet.js';
import { createQueuePage } from './queue.js';
import { createTenantsPage } from './tenants.js';
import { createDecisionsPage } from './decisions.js';
import { createAuditPage } from './audit.js';

const POLL_MS = 5000;
const PAGES = {
  fleet: createFleetPage,
  queue: createQueuePage,
  tenants: createTenantsPage,
  decisions: createDecisionsPage,
  audit: createAuditPage,
};

class App {
  constructor(doc, win) {
    this.doc = doc;
    this.win = win;
    this.session = new Session(win.sessionStorage, win.location, win.history);
    this.api = null;
    this.page = null;
    this.pageName = '';
    this.timer = 0;
    // Bumped on every navigation and sign-out: an answer that arrives for an older
    // generation is dropped, so a slow poll cannot redraw a page the user has left.
    this.generation = 0;
    this.$ = id => doc.getElementById(id);
  }

  start() {
    const offered = this.session.takeFragment();
    this.$('sign-in-form').addEventListener('submit', e => {
      e.preventDefault();
      const token = this.$('token-input').value.trim();
      if (!token) return;
      this.$('token-input').value = '';
      this.session.set(token);
      this.signedIn();
    });
    this.$('sign-out').addEventListener('click', () => this.signOut(''));
    this.win.addEventListener('hashchange', () => {
      const token = this.session.takeFragment();
      if (token) return this.offer(token);
      if (this.api) this.show();
    });
    if (offered) this.offer(offered);
    else if (this.session.token()) this.signedIn();
    else this.signOut('');
  }

  // A link carried a token: shown in the sign-in form, used only when the person presses
  // Sign in (whoever is signed in now stays signed in until then).
  offer(token) {
    this.stop();
    this.$('sign-in-view').hidden = false;
    this.$('token-input').value = token;
    this.$('link-offer').hidden = false;
  }

  signedIn() {
    this.api = makeApi(this.session.token());
    this.history = new HistoryCache();  // per token: another tenant's samples never carry over
    this.$('sign-in-view').hidden = true;
    this.$('link-offer').hidden = true;
    this.$('nav').hidden = false;
    this.$('sign-out').hidden = false;
    this.banner('');
    this.show();
  }

  signOut(message) {
    this.stop();
    this.session.clear();
    this.api = null;
    this.history = null;
    this.page = null;
    this.pageName = '';
    replaceChildren(this.$('page'));
    this.$('nav').hidden = true;
    this.$('sign-out').hidden = true;
    this.$('sign-in-view').hidden = false;
    this.status('');
    this.banner(message);
    this.$('token-input').focus();
  }

  stop() {
    this.generation += 1;
    if (this.timer) this.win.clearTimeout(this.timer);
    this.timer = 0;
  }

  // Shows the page the hash names and starts polling it.
  show() {
    const m = /^#\/([a-z]+)/.exec(this.win.location.hash || '');
    const name = m && PAGES[m[1]] ? m[1] : 'fleet';
    if (!m || m[1] !== name) this.win.history.replaceState(null, '', `${this.win.location.pathname}#/${name}`);
    this.stop();
    this.pageName = name;
    this.page = PAGES[name]({ history: this.history });
    replaceChildren(this.$('page'), this.page.element);
    for (const a of this.$('nav').querySelectorAll('a')) {
      const current = a.getAttribute('href') === `#/${name}`;
      a.classList.toggle('active', current);
      if (current) a.setAttribute('aria-current', 'page');
      else a.removeAttribute('aria-current');
    }
    this.doc.title = `gpufed · ${name}`;
    this.status('loading …');
    this.poll(this.generation);
  }

  async poll(generation) {
    try {
      await this.page.refresh(this.api);
      if (generation !== this.generation) return;
      this.banner('');
      this.status(`live · updated ${new Date().toLocaleTimeString()}`);
    } catch (e) {
      if (generation !== this.generation) return;
      if (e instanceof ApiError && e.status === 401) {
        this.signOut(`The controller refused this token (401: ${e.message}). Sign in with a valid API token.`);
        return;
      }
      this.failed(e);
    }
    if (generation === this.generation) this.timer = this.win.setTimeout(() => this.poll(generation), POLL_MS);
  }

  failed(e) {
    const what = e instanceof ApiError
      ? `${e.status ? `HTTP ${e.status}` : 'No answer'} from ${e.path}: ${e.message}`
      : `The page failed: ${e && e.message ? e.message : e}`;
    this.banner(`${what}. Showing the last data received; retrying every ${POLL_MS / 1000} s.`);
    this.status('stale');
  }

  banner(text) {
    const b = this.$('banner');
    b.textContent = text;
    b.hidden = !text;
  }

  status(text) {
    this.$('status').textContent = text;
  }
}

new App(document, window).start();
