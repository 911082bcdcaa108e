// Renders an admin-configured content option the way new-api does: a URL is shown in a full-height iframe,
// text starting with '<' is HTML, anything else is Markdown (rendered with marked).
// marked is imported only when Markdown is actually shown: the landing page without home-page content, the common
// case, does not download it (docs/perf/first-load.md).
// Props:
//   content: string        – the option value (Markdown, HTML or an http(s) URL)
//   title?: string         – iframe title for accessibility
import { useEffect, useState } from 'react';

export interface RichContentProps {
  content: string;
  title?: string;
}

export function contentKind(content: string): 'url' | 'html' | 'markdown' {
  const s = content.trim();
  if (/^https?:\/\/\S+$/i.test(s)) return 'url';
  if (s.startsWith('<')) return 'html';
  return 'markdown';
}

/** The HTML of `markdown` once marked has loaded (null until then, or when there is no Markdown to render). */
function useMarkdownHtml(markdown: string | null): string | null {
  const [rendered, setRendered] = useState<{ source: string; html: string } | null>(null);
  useEffect(() => {
    if (markdown === null) return;
    let live = true;
    void import('marked').then(({ marked }) => {
      if (live) setRendered({ source: markdown, html: marked.parse(markdown, { async: false }) as string });
    });
    return () => {
      live = false;
    };
  }, [markdown]);
  return rendered && rendered.source === markdown ? rendered.html : null;
}

export default function RichContent({ content, title }: RichContentProps) {
  const kind = contentKind(content);
  const markdownHtml = useMarkdownHtml(kind === 'markdown' ? content : null);
  if (kind === 'url') {
    return (
      <iframe
        src={content.trim()}
        title={title ?? 'content'}
        style={{ width: '100%', height: 'calc(100vh - 160px)', border: 'none' }}
      />
    );
  }
  if (kind === 'markdown' && markdownHtml === null) return <div className="markdown-body" aria-busy="true" />;
  return <div className="markdown-body" dangerouslySetInnerHTML={{ __html: markdownHtml ?? content }} />;
}
