// Renders an admin-configured content option the way new-api does: a URL is shown in a full-height iframe,
// text starting with '<' is HTML, anything else is Markdown (rendered with marked).
// Props:
//   content: string        – the option value (Markdown, HTML or an http(s) URL)
//   title?: string         – iframe title for accessibility
import { useMemo } from 'react';
import { marked } from 'marked';

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

export default function RichContent({ content, title }: RichContentProps) {
  const kind = contentKind(content);
  const html = useMemo(
    () => (kind === 'markdown' ? (marked.parse(content, { async: false }) as string) : content),
    [kind, content],
  );
  if (kind === 'url') {
    return (
      <iframe
        src={content.trim()}
        title={title ?? 'content'}
        style={{ width: '100%', height: 'calc(100vh - 160px)', border: 'none' }}
      />
    );
  }
  return <div className="markdown-body" dangerouslySetInnerHTML={{ __html: html }} />;
}
