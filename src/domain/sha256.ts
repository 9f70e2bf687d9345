// A synchronous SHA-256 (FIPS 180-4) for short inputs on hot paths: derived record ids and token
// lookups. Web Crypto's digest is asynchronous, and its fixed cost per call dominates for inputs of a
// few dozen bytes. Secret-keyed work (HMAC, AES) stays with Web Crypto.
const K = new Uint32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
  0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
  0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
  0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
  0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
  0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
  0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
  0xc67178f2,
]);

const INITIAL = new Uint32Array([
  0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
]);
// The message schedule is reused: the function is synchronous, so no two calls share it at once.
const W = new Uint32Array(64);

/** SHA-256 of bytes, computed synchronously. */
export function sha256(data: Uint8Array): Uint8Array {
  const n = data.length;
  const blocks = Math.ceil((n + 9) / 64);
  const padded = new Uint8Array(blocks * 64);
  padded.set(data);
  padded[n] = 0x80;
  const bitsHigh = Math.floor(n / 0x20000000);
  const bitsLow = (n << 3) >>> 0;
  const end = padded.length;
  padded[end - 8] = bitsHigh >>> 24;
  padded[end - 7] = bitsHigh >>> 16;
  padded[end - 6] = bitsHigh >>> 8;
  padded[end - 5] = bitsHigh;
  padded[end - 4] = bitsLow >>> 24;
  padded[end - 3] = bitsLow >>> 16;
  padded[end - 2] = bitsLow >>> 8;
  padded[end - 1] = bitsLow;

  let h0 = INITIAL[0]!;
  let h1 = INITIAL[1]!;
  let h2 = INITIAL[2]!;
  let h3 = INITIAL[3]!;
  let h4 = INITIAL[4]!;
  let h5 = INITIAL[5]!;
  let h6 = INITIAL[6]!;
  let h7 = INITIAL[7]!;
  for (let off = 0; off < end; off += 64) {
    for (let i = 0; i < 16; i++) {
      const j = off + i * 4;
      W[i] = (padded[j]! << 24) | (padded[j + 1]! << 16) | (padded[j + 2]! << 8) | padded[j + 3]!;
    }
    for (let i = 16; i < 64; i++) {
      const x = W[i - 15]!;
      const y = W[i - 2]!;
      const s0 = ((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3);
      const s1 = ((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^ (y >>> 10);
      W[i] = W[i - 16]! + s0 + W[i - 7]! + s1;
    }
    let a = h0;
    let b = h1;
    let c = h2;
    let d = h3;
    let e = h4;
    let f = h5;
    let g = h6;
    let h = h7;
    for (let i = 0; i < 64; i++) {
      const S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
      const t1 = (h + S1 + ((e & f) ^ (~e & g)) + K[i]! + W[i]!) | 0;
      const S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
      const t2 = (S0 + ((a & b) ^ (a & c) ^ (b & c))) | 0;
      h = g;
      g = f;
      f = e;
      e = (d + t1) | 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) | 0;
    }
    h0 = (h0 + a) | 0;
    h1 = (h1 + b) | 0;
    h2 = (h2 + c) | 0;
    h3 = (h3 + d) | 0;
    h4 = (h4 + e) | 0;
    h5 = (h5 + f) | 0;
    h6 = (h6 + g) | 0;
    h7 = (h7 + h) | 0;
  }
  const out = new Uint8Array(32);
  const words = [h0, h1, h2, h3, h4, h5, h6, h7];
  for (let i = 0; i < 8; i++) {
    const w = words[i]!;
    out[i * 4] = w >>> 24;
    out[i * 4 + 1] = w >>> 16;
    out[i * 4 + 2] = w >>> 8;
    out[i * 4 + 3] = w;
  }
  return out;
}
