// Generate Tend's icons as PNG files, with nothing but zlib: the app icon (build/icon.png for the
// installers, resources/icon.png for the window and notifications) and the tray icons in three
// health colours (resources/tray/tray-{green,amber,red}.png, with @2x variants).
// Run: node scripts/gen-icons.mjs (the PNGs are committed; run again after changing this file).
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { deflateSync } from 'node:zlib';

const root = fileURLToPath(new URL('..', import.meta.url));

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
function crc32(buf) {
  let c = 0xffffffff;
  for (const b of buf) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}
function chunk(type, data) {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([len, body, crc]);
}
/** RGBA pixels (Uint8Array, width*height*4) → PNG bytes. */
export function png(width, height, rgba) {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 6; // RGBA
  const raw = Buffer.alloc((width * 4 + 1) * height);
  for (let y = 0; y < height; y++) {
    raw[y * (width * 4 + 1)] = 0; // filter: none
    Buffer.from(rgba.buffer, rgba.byteOffset + y * width * 4, width * 4).copy(raw, y * (width * 4 + 1) + 1);
  }
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', ihdr), chunk('IDAT', deflateSync(raw, { level: 9 })), chunk('IEND', Buffer.alloc(0))]);
}

/**
 * Rasterise with 4×4 supersampling. `shade(x, y)` gets coordinates in [0,1]² and returns
 * [r, g, b, a] (0–255, a 0–1) or null for transparent; samples are averaged (premultiplied).
 */
function raster(size, shade) {
  const out = new Uint8Array(size * size * 4);
  const S = 4;
  for (let py = 0; py < size; py++) {
    for (let px = 0; px < size; px++) {
      let r = 0, g = 0, b = 0, a = 0;
      for (let sy = 0; sy < S; sy++) {
        for (let sx = 0; sx < S; sx++) {
          const c = shade((px + (sx + 0.5) / S) / size, (py + (sy + 0.5) / S) / size);
          if (!c) continue;
          r += c[0] * c[3]; g += c[1] * c[3]; b += c[2] * c[3]; a += c[3];
        }
      }
      const i = (py * size + px) * 4;
      if (a > 0) {
        out[i] = Math.round(r / a); out[i + 1] = Math.round(g / a); out[i + 2] = Math.round(b / a);
        out[i + 3] = Math.round((a / (S * S)) * 255);
      }
    }
  }
  return out;
}

const hex = (h) => [parseInt(h.slice(1, 3), 16), parseInt(h.slice(3, 5), 16), parseInt(h.slice(5, 7), 16)];
const dist = (x, y, cx, cy) => Math.hypot(x - cx, y - cy);
/** Distance from (x,y) to the segment (ax,ay)–(bx,by). */
function segDist(x, y, ax, ay, bx, by) {
  const dx = bx - ax, dy = by - ay;
  const t = Math.max(0, Math.min(1, ((x - ax) * dx + (y - ay) * dy) / (dx * dx + dy * dy)));
  return Math.hypot(x - (ax + t * dx), y - (ay + t * dy));
}

/** A clock face: ring and two hands (07:00-ish, the morning run), in `fg`. */
function clockMark(x, y, r, stroke) {
  const d = dist(x, y, 0.5, 0.5);
  if (Math.abs(d - r) < stroke / 2) return true;
  if (segDist(x, y, 0.5, 0.5, 0.5, 0.5 - r * 0.62) < stroke / 2) return true;
  if (segDist(x, y, 0.5, 0.5, 0.5 + r * 0.42, 0.5 + r * 0.24) < stroke / 2) return true;
  return false;
}

/** The app icon: a rounded green square with a white clock. */
function appIcon(size) {
  const bg = hex('#1f8a5b');
  const bg2 = hex('#17704a');
  return raster(size, (x, y) => {
    const m = 0.06, rad = 0.2;
    const qx = Math.max(Math.abs(x - 0.5) - (0.5 - m - rad), 0);
    const qy = Math.max(Math.abs(y - 0.5) - (0.5 - m - rad), 0);
    if (Math.hypot(qx, qy) > rad) return null;
    if (clockMark(x, y, 0.26, 0.055)) return [255, 255, 255, 1];
    const t = y; // a gentle vertical gradient
    return [bg[0] * (1 - t) + bg2[0] * t, bg[1] * (1 - t) + bg2[1] * t, bg[2] * (1 - t) + bg2[2] * t, 1];
  });
}

/**
 * A tray icon: a disc in the health colour with a darker rim; a white clock at 32 px, a white dot
 * at 16 px (a clock that small is a smudge).
 */
function trayIcon(size, colour) {
  const fill = hex(colour.fill);
  const rim = hex(colour.rim);
  return raster(size, (x, y) => {
    const d = dist(x, y, 0.5, 0.5);
    if (d > 0.47) return null;
    if (size >= 32 ? clockMark(x, y, 0.25, 0.085) : d < 0.15) return [255, 255, 255, 1];
    if (d > 0.47 - (size >= 32 ? 0.05 : 0.08)) return [...rim, 1];
    return [...fill, 1];
  });
}

const TRAY = {
  green: { fill: '#2ea043', rim: '#1a7f37' },
  amber: { fill: '#e3a008', rim: '#b07d00' },
  red: { fill: '#e5484d', rim: '#b42318' },
};

function write(rel, size, pixels) {
  const file = `${root}${rel}`;
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, png(size, size, pixels));
}

write('build/icon.png', 512, appIcon(512));
write('resources/icon.png', 256, appIcon(256));
for (const [name, colour] of Object.entries(TRAY)) {
  write(`resources/tray/tray-${name}.png`, 16, trayIcon(16, colour));
  write(`resources/tray/tray-${name}@2x.png`, 32, trayIcon(32, colour));
}
console.log('icons written: build/icon.png, resources/icon.png, resources/tray/*.png');
