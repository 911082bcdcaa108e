// Incremental splitter for a streamed top-level JSON array (Gemini's streamGenerateContent without alt=sse):
// bytes in, the text of each whole element out. Bytes arrive split anywhere, even inside a UTF-8 character or a
// string; brackets inside strings and escaped quotes do not count.
import { StringDecoder } from 'node:string_decoder';

export class JsonArraySplitter {
  private readonly decoder = new StringDecoder('utf8');
  /** 0 before the array's `[`, 1 inside it between elements, more inside an element */
  private depth = 0;
  private inString = false;
  private escaped = false;
  /** the element being read */
  private current = '';

  push(chunk: Buffer | string): string[] {
    const text = typeof chunk === 'string' ? chunk : this.decoder.write(chunk);
    const out: string[] = [];
    let start = this.depth > 1 ? 0 : -1;
    for (let i = 0; i < text.length; i++) {
      const c = text[i];
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (c === '\\') this.escaped = true;
        else if (c === '"') this.inString = false;
        continue;
      }
      if (c === '"') {
        this.inString = true;
      } else if (c === '{' || c === '[') {
        this.depth++;
        if (this.depth === 2) start = i;
      } else if (c === '}' || c === ']') {
        if (this.depth === 0) continue;
        this.depth--;
        if (this.depth === 1 && start >= 0) {
          out.push(this.current + text.slice(start, i + 1));
          this.current = '';
          start = -1;
        }
      }
    }
    if (this.depth > 1 && start >= 0) this.current += text.slice(start);
    return out;
  }

  /** The end of the stream: an element cut short is dropped (it cannot be parsed). */
  end(): string[] {
    this.decoder.end();
    this.current = '';
    return [];
  }
}
