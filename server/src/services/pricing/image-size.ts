// Image dimensions from the file header (PNG, GIF, WebP, JPEG), for vision-token estimates. Only inline
// `data:` URLs are read: the relay never fetches a remote image just to count tokens.

export interface ImageSize {
  width: number;
  height: number;
}

/** Dimensions of a base64 data URL image, or null (remote URL, unknown format, truncated header). */
export function imageSizeFromDataUrl(url: string): ImageSize | null {
  if (!url.startsWith('data:')) return null;
  const comma = url.indexOf(',');
  if (comma < 0 || !url.slice(0, comma).includes(';base64')) return null;
  const start = comma + 1;
  // Most headers sit in the first few hundred bytes; a JPEG's frame header can follow a large EXIF block.
  const head = decodeBase64Prefix(url, start, 4096);
  const size = imageSizeFromBytes(head);
  if (size || !isJpeg(head) || url.length - start <= 4096) return size;
  return imageSizeFromBytes(Buffer.from(url.slice(start), 'base64'));
}

function decodeBase64Prefix(s: string, start: number, chars: number): Buffer {
  const end = Math.min(s.length, start + chars);
  return Buffer.from(s.slice(start, end - ((end - start) % 4)), 'base64');
}

function isJpeg(b: Buffer): boolean {
  return b.length >= 2 && b[0] === 0xff && b[1] === 0xd8;
}

export function imageSizeFromBytes(b: Buffer): ImageSize | null {
  if (b.length >= 24 && b.readUInt32BE(0) === 0x89504e47 && b.toString('latin1', 12, 16) === 'IHDR') {
    return valid(b.readUInt32BE(16), b.readUInt32BE(20));
  }
  if (b.length >= 10 && (b.toString('latin1', 0, 6) === 'GIF87a' || b.toString('latin1', 0, 6) === 'GIF89a')) {
    return valid(b.readUInt16LE(6), b.readUInt16LE(8));
  }
  if (b.length >= 30 && b.toString('latin1', 0, 4) === 'RIFF' && b.toString('latin1', 8, 12) === 'WEBP') {
    return webpSize(b);
  }
  if (isJpeg(b)) return jpegSize(b);
  return null;
}

function webpSize(b: Buffer): ImageSize | null {
  const chunk = b.toString('latin1', 12, 16);
  if (chunk === 'VP8 ') return valid(b.readUInt16LE(26) & 0x3fff, b.readUInt16LE(28) & 0x3fff);
  if (chunk === 'VP8L') {
    const b0 = b[21]!;
    const b1 = b[22]!;
    const b2 = b[23]!;
    const b3 = b[24]!;
    return valid(1 + (((b1 & 0x3f) << 8) | b0), 1 + (((b3 & 0x0f) << 10) | (b2 << 2) | ((b1 & 0xc0) >> 6)));
  }
  if (chunk === 'VP8X') return valid(1 + b.readUIntLE(24, 3), 1 + b.readUIntLE(27, 3));
  return null;
}

function jpegSize(b: Buffer): ImageSize | null {
  let i = 2;
  while (i + 9 < b.length) {
    if (b[i] !== 0xff) return null;
    const marker = b[i + 1]!;
    if (marker === 0xff) {
      i++;
      continue;
    }
    // Standalone markers carry no length.
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd8)) {
      i += 2;
      continue;
    }
    // SOF0..SOF15 except DHT (C4), JPG (C8) and DAC (CC) hold the frame size.
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return valid(b.readUInt16BE(i + 7), b.readUInt16BE(i + 5));
    }
    i += 2 + b.readUInt16BE(i + 2);
  }
  return null;
}

function valid(width: number, height: number): ImageSize | null {
  return width > 0 && height > 0 ? { width, height } : null;
}
