// Settings → Other → system info: is a newer release out? Asked from the browser to GitHub's "latest release" API, as
// new-api does (new-api-compat.md §11.5). The repository is set at build time with VITE_RELEASES_REPO (owner/name).
export const RELEASES_REPO: string = (import.meta.env.VITE_RELEASES_REPO as string | undefined)?.trim() ?? '';
const TIMEOUT_MS = 10_000;

export interface Release {
  tag: string;
  name: string;
  notes: string;
  url: string;
}

/** The repository's latest release; throws when GitHub cannot be reached or does not answer with one. */
export async function fetchLatestRelease(repo: string): Promise<Release> {
  const res = await fetch(`https://api.github.com/repos/${repo}/releases/latest`, {
    headers: { Accept: 'application/vnd.github+json' },
    signal: AbortSignal.timeout(TIMEOUT_MS),
  });
  if (!res.ok) throw new Error(`GitHub answered ${res.status}`);
  const body = (await res.json()) as { tag_name?: unknown; name?: unknown; body?: unknown; html_url?: unknown };
  if (typeof body.tag_name !== 'string' || !body.tag_name) throw new Error('no release');
  return {
    tag: body.tag_name,
    name: typeof body.name === 'string' && body.name ? body.name : body.tag_name,
    notes: typeof body.body === 'string' ? body.body : '',
    url: typeof body.html_url === 'string' ? body.html_url : `https://github.com/${repo}/releases`,
  };
}

function versionParts(v: string): number[] | null {
  const m = /^v?(\d+(?:\.\d+)*)/.exec(v.trim());
  return m ? m[1]!.split('.').map(Number) : null;
}

/** Whether `tag` is newer than the running `version`; versions that are not numeric compare by being different. */
export function isNewer(tag: string, version: string | undefined): boolean {
  const a = versionParts(tag);
  const b = version ? versionParts(version) : null;
  if (!a || !b) return tag.trim() !== (version ?? '').trim();
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) return d > 0;
  }
  return false;
}
