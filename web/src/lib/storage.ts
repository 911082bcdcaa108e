// Small localStorage helpers shared by pages.
export const PAGE_SIZE_KEY = 'page-size';
export const PAGE_SIZE_OPTIONS = [10, 20, 50, 100];

/** The remembered table page size (spec §9), default 10. */
export function getPageSize(fallback = 10): number {
  const v = Number(localStorage.getItem(PAGE_SIZE_KEY));
  return PAGE_SIZE_OPTIONS.includes(v) ? v : fallback;
}

export function setPageSize(size: number): void {
  localStorage.setItem(PAGE_SIZE_KEY, String(size));
}

/** Copies text; returns false when the clipboard is unavailable (caller shows the manual-copy dialog). */
export async function copyText(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    try {
      const ta = document.createElement('textarea');
      ta.value = text;
      ta.style.position = 'fixed';
      ta.style.opacity = '0';
      document.body.appendChild(ta);
      ta.select();
      const ok = document.execCommand('copy');
      ta.remove();
      return ok;
    } catch {
      return false;
    }
  }
}
