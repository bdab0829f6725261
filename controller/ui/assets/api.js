// The controller's JSON API, called with the signed-in token as a bearer header. Errors
// come back as ApiError values carrying the HTTP status, so the app can tell a refused
// token (401) from a failing controller (5xx) from an endpoint this controller lacks (404).

export class ApiError extends Error {
  constructor(status, message, path) {
    super(message);
    this.status = status;  // 0: the request never got an answer
    this.path = path;
  }
}

export function makeApi(token) {
  async function get(path) {
    let res;
    try {
      // no-store: every poll must show the controller's state now, never a cached answer.
      res = await fetch(path, { headers: { Authorization: `Bearer ${token}` }, cache: 'no-store', credentials: 'omit' });
    } catch (e) {
      throw new ApiError(0, `controller unreachable (${e.message})`, path);
    }
    const text = await res.text();
    let body = null;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {
      body = null;
    }
    if (!res.ok) {
      const message = body && body.error && body.error.message ? body.error.message : `HTTP ${res.status}`;
      throw new ApiError(res.status, message, path);
    }
    if (body === null) throw new ApiError(res.status, 'the answer is not JSON', path);
    return body;
  }
  // Like get, but an endpoint this controller does not serve (404) reads as null.
  async function optional(path) {
    try {
      return await get(path);
    } catch (e) {
      if (e instanceof ApiError && e.status === 404) return null;
      throw e;
    }
  }
  return { get, optional };
}

// /v1/tenants/{t}/workloads/{name}/explain with each segment escaped.
export function explainPath(tenant, workload) {
  return `/v1/tenants/${encodeURIComponent(tenant)}/workloads/${encodeURIComponent(workload)}/explain`;
}
