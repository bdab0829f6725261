// Where the token lives: this tab's sessionStorage (gone when the tab closes, never sent
// by the browser on its own, unlike a cookie). A `#token=` fragment is read once and
// removed from the address bar, so it is neither bookmarked nor left in history (a
// fragment never reaches the server, so it is not in its logs either); it is only
// offered, never stored: a link from someone else must not sign a person in as the
// link's author without asking (they would then submit work, or read data, under an
// identity that is not theirs).

const KEY = 'gpufed.token';

export class Session {
  constructor(storage, location, history) {
    this.storage = storage;
    this.location = location;
    this.history = history;
    this.memory = null;  // when storage is unavailable (disabled, private mode quirks)
  }

  token() {
    try {
      return this.storage.getItem(KEY) || this.memory;
    } catch {
      return this.memory;
    }
  }

  set(token) {
    this.memory = token;
    try {
      this.storage.setItem(KEY, token);
    } catch {
      // kept in memory only: the tab still works until it is reloaded
    }
  }

  clear() {
    this.memory = null;
    try {
      this.storage.removeItem(KEY);
    } catch {
      // nothing stored
    }
  }

  // Takes a token from "#token=TOKEN" (optionally "#token=TOKEN&page=queue") and replaces
  // the fragment with the page's route. Returns the token ('' when there was none); the
  // caller asks before it signs in with it.
  takeFragment() {
    const hash = this.location.hash || '';
    if (!hash.startsWith('#token=')) return false;
    // Not URLSearchParams: it reads '+' as a space, and tokens may hold '+'.
    const params = new Map(hash.slice(1).split('&').map(part => {
      const eq = part.indexOf('=');
      const value = eq < 0 ? '' : part.slice(eq + 1);
      let decoded = value;
      try {
        decoded = decodeURIComponent(value);
      } catch {
        // a stray '%': take the text as it is
      }
      return [eq < 0 ? part : part.slice(0, eq), decoded];
    }));
    const token = (params.get('token') || '').trim();
    const page = /^[a-z]+$/.test(params.get('page') || '') ? params.get('page') : 'fleet';
    this.history.replaceState(null, '', `${this.location.pathname}${this.location.search}#/${page}`);
    return token;
  }
}
