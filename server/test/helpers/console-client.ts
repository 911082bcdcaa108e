// A console API client that behaves like the web app: keeps the session cookie and sends New-Api-User.
export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

export class ConsoleClient {
  cookie = '';
  userId: number | null = null;
  /** when set, sent as Authorization instead of relying on the cookie */
  accessToken: string | null = null;

  constructor(readonly base: string) {}

  async request<T = any>(
    method: string,
    path: string,
    body?: unknown,
    extraHeaders: Record<string, string> = {},
  ): Promise<ApiResponse<T>> {
    const headers: Record<string, string> = { 'Cache-Control': 'no-store', ...extraHeaders };
    if (this.cookie) headers.cookie = this.cookie;
    if (this.userId !== null && !('New-Api-User' in extraHeaders)) headers['New-Api-User'] = String(this.userId);
    if (this.accessToken) headers.authorization = this.accessToken;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(this.base + path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const setCookie = res.headers.getSetCookie?.() ?? [];
    for (const c of setCookie) {
      const [pair] = c.split(';');
      if (pair.startsWith('session=')) this.cookie = pair.endsWith('=') ? '' : pair;
    }
    const text = await res.text();
    let parsed: any = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      /* not JSON */
    }
    return { status: res.status, headers: res.headers, body: parsed as T };
  }

  get<T = any>(path: string, headers?: Record<string, string>) {
    return this.request<T>('GET', path, undefined, headers);
  }
  post<T = any>(path: string, body?: unknown, headers?: Record<string, string>) {
    return this.request<T>('POST', path, body ?? {}, headers);
  }
  put<T = any>(path: string, body?: unknown, headers?: Record<string, string>) {
    return this.request<T>('PUT', path, body ?? {}, headers);
  }
  delete<T = any>(path: string, headers?: Record<string, string>) {
    return this.request<T>('DELETE', path, undefined, headers);
  }

  async login(username: string, password: string): Promise<ApiResponse> {
    const res = await this.post('/api/user/login', { username, password });
    if (res.body?.success) this.userId = res.body.data.id;
    return res;
  }
}
