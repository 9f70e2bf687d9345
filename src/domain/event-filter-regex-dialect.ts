// The filter dialect of regular expressions, written in RE2's syntax: the common subset of JavaScript
// and PCRE is read, what needs backtracking (backreferences, lookaround) or means different things in
// different dialects (\A, \Z, POSIX classes, inline flags) is refused with the reason.
// event-filter-regex.ts compiles the result; docs/adr/0014-payload-filters.md says why.

/** Why a pattern is refused, in words that follow "the pattern": "has an unclosed (". */
export class PatternError extends Error {}

// JavaScript's \s (Unicode white space and line ends), which filters promise; RE2's is ASCII only.
const SPACE =
  "\\x{9}-\\x{d}\\x{20}\\x{a0}\\x{1680}\\x{2000}-\\x{200a}\\x{2028}\\x{2029}\\x{202f}\\x{205f}\\x{3000}\\x{feff}";
const NOT_SPACE =
  "\\x{0}-\\x{8}\\x{e}-\\x{1f}\\x{21}-\\x{9f}\\x{a1}-\\x{167f}\\x{1681}-\\x{1fff}\\x{200b}-\\x{2027}" +
  "\\x{202a}-\\x{202e}\\x{2030}-\\x{205e}\\x{2060}-\\x{2fff}\\x{3001}-\\x{fefe}\\x{ff00}-\\x{10ffff}";
/** Class escapes inside [...]: RE2's \d and \w are JavaScript's; \s and \S are spelt out. */
const CLASS_ESCAPES: Record<string, string> = {
  d: "\\d",
  D: "\\D",
  w: "\\w",
  W: "\\W",
  s: SPACE,
  S: NOT_SPACE,
};
const CONTROL_ESCAPES: Record<string, number> = { n: 0x0a, r: 0x0d, t: 0x09, f: 0x0c, v: 0x0b, "0": 0 };

const cp = (n: number) => `\\x{${n.toString(16)}}`;
const isDigit = (c: string | undefined) => c !== undefined && c >= "0" && c <= "9";
/** What the last item written was, for the quantifier that may follow it. */
type Last = "none" | "atom" | "anchor" | "quantifier";
/** Text written in RE2's syntax, and what it was. */
type Written = [string, Last];

/** Reads a pattern of the filter dialect and writes it in RE2's syntax; throws PatternError. */
class Translator {
  private i = 0;
  private out = "";
  private last: Last = "none";
  private depth = 0;
  private readonly cs: string[];

  private readonly maxRepeat: number;
  constructor(pattern: string, maxRepeat: number) {
    this.maxRepeat = maxRepeat;
    this.cs = Array.from(pattern);
  }

  translate(): string {
    while (this.i < this.cs.length) {
      const [text, last] = this.item();
      this.out += text;
      this.last = last;
    }
    if (this.depth > 0) throw new PatternError("has an unclosed (");
    return this.out;
  }

  private peek(ahead = 0): string | undefined {
    return this.cs[this.i + ahead];
  }

  private item(): Written {
    const c = this.cs[this.i++]!;
    switch (c) {
      case "(":
        return this.open();
      case ")":
        if (this.depth === 0) throw new PatternError("has an unmatched )");
        this.depth--;
        // A group is an atom, so a group holding only an anchor may be repeated, as JavaScript allows: (^)?
        return [")", "atom"];
      case "|":
        return ["|", "none"];
      case "[":
        return [this.charClass(), "atom"];
      case ".":
        return [".", "atom"];
      case "^":
      case "$":
        return [c, "anchor"];
      case "\\":
        return this.escape();
      case "*":
      case "+":
      case "?":
        return this.quantifier(c, `has nothing for ${c} to repeat`);
      case "{": {
        const counted = this.counted(this.i - 1);
        if (!counted) return ["\\{", "atom"];
        this.i += counted.length - 1;
        return this.quantifier(counted, "has nothing for {…} to repeat");
      }
      default:
        return [/^[!-/:-@[-`{-~]$/.test(c) ? `\\${c}` : c, "atom"];
    }
  }

  private quantifier(text: string, nothing: string): Written {
    if (this.last === "none") throw new PatternError(nothing);
    if (this.last === "anchor")
      throw new PatternError("repeats an anchor or word boundary, which matches no text");
    if (this.last === "quantifier") throw new PatternError("repeats a quantifier (nothing to repeat)");
    let lazy = "";
    if (this.peek() === "?") {
      this.i++;
      lazy = "?";
    } else if (this.peek() === "+")
      throw new PatternError("uses a possessive quantifier, which is not supported");
    return [text + lazy, "quantifier"];
  }

  /** `{n}`, `{n,}` or `{n,m}` starting at `at` (checked against the limits), or null: a literal brace. */
  private counted(at: number): string | null {
    const m = /^\{(\d+)(,(\d*))?\}/.exec(this.cs.slice(at, at + 16).join(""));
    if (!m) return null;
    const min = Number(m[1]);
    const max = m[2] === undefined ? min : m[3] === "" ? Infinity : Number(m[3]);
    if (min > this.maxRepeat || (max !== Infinity && max > this.maxRepeat)) {
      throw new PatternError(`repeats more than ${this.maxRepeat} times`);
    }
    if (max < min) throw new PatternError(`has a repetition {${min},${max}} whose bounds are reversed`);
    return m[0];
  }

  private open(): Written {
    this.depth++;
    if (this.peek() !== "?") return ["(?:", "none"];
    const next = this.cs.slice(this.i, this.i + 3).join("");
    if (next.startsWith("?:")) this.i += 2;
    else if (/^\?(=|!|<=|<!)/.test(next)) {
      throw new PatternError("uses lookahead or lookbehind, which is not supported");
    } else if (next.startsWith("?<") || next.startsWith("?P<")) {
      // Named groups are accepted and matched as plain groups: a filter keeps no captures.
      const close = this.cs.indexOf(">", this.i);
      if (close === -1) throw new PatternError("has an unfinished group name");
      this.i = close + 1;
    } else throw new PatternError("uses an inline flag or group kind that is not supported; use $options");
    return ["(?:", "none"];
  }

  private escape(): Written {
    const c = this.peek();
    if (c === undefined) throw new PatternError("ends with a lone backslash");
    if (c === "b" || c === "B") {
      this.i++;
      return [`\\${c}`, "anchor"];
    }
    if (c in CLASS_ESCAPES) {
      this.i++;
      if (c === "s") return [`[${SPACE}]`, "atom"];
      if (c === "S") return [`[${NOT_SPACE}]`, "atom"];
      return [`\\${c}`, "atom"];
    }
    return [cp(this.escapedCodePoint()), "atom"];
  }

  /** The code point of an escape (the backslash consumed) that stands for one character. */
  private escapedCodePoint(): number {
    const c = this.cs[this.i++]!;
    if (c in CONTROL_ESCAPES) {
      if (c === "0" && isDigit(this.peek())) throw new PatternError("uses an octal escape; use \\xHH");
      return CONTROL_ESCAPES[c]!;
    }
    if (/^[1-9]$/.test(c) || c === "k")
      throw new PatternError("uses a backreference, which is not supported");
    if (c === "x") return this.hex(2);
    if (c === "u") {
      if (this.peek() !== "{") return this.surrogatePair(this.hex(4));
      const close = this.cs.indexOf("}", this.i);
      const digits = close === -1 ? "" : this.cs.slice(this.i + 1, close).join("");
      if (!/^[0-9a-fA-F]{1,6}$/.test(digits) || Number.parseInt(digits, 16) > 0x10ffff) {
        throw new PatternError("has a malformed \\u{…} escape");
      }
      this.i = close + 1;
      return Number.parseInt(digits, 16);
    }
    if (/^[A-Za-z0-9]$/.test(c)) {
      throw new PatternError(
        `uses \\${c}, which is not supported (it means different things in different regex dialects)`,
      );
    }
    return c.codePointAt(0)!;
  }

  /** `\uD83D\uDE00` is one character, 😀, as in JavaScript's u mode: a high surrogate takes a low one. */
  private surrogatePair(high: number): number {
    if (high < 0xd800 || high > 0xdbff || this.peek() !== "\\" || this.peek(1) !== "u") return high;
    const digits = this.cs.slice(this.i + 2, this.i + 6).join("");
    const low = /^[0-9a-fA-F]{4}$/.test(digits) ? Number.parseInt(digits, 16) : -1;
    if (low < 0xdc00 || low > 0xdfff) return high;
    this.i += 6;
    return 0x10000 + ((high - 0xd800) << 10) + (low - 0xdc00);
  }

  private hex(n: number): number {
    const digits = this.cs.slice(this.i, this.i + n).join("");
    if (digits.length !== n || !/^[0-9a-fA-F]+$/.test(digits))
      throw new PatternError("has a malformed hex escape");
    this.i += n;
    return Number.parseInt(digits, 16);
  }

  /** A class after its `[`, written with every member as a code point or a class escape. */
  private charClass(): string {
    let text = "[";
    if (this.peek() === "^") {
      this.i++;
      text += "^";
    }
    if (this.peek() === "]") throw new PatternError("has an empty character class [] or [^]");
    for (;;) {
      const c = this.peek();
      if (c === undefined) throw new PatternError("has an unclosed [");
      if (c === "]") {
        this.i++;
        return `${text}]`;
      }
      if (c === "[" && this.peek(1) === ":") {
        throw new PatternError("uses a POSIX class such as [:alpha:], which is not supported");
      }
      const low = this.classAtom();
      if (this.peek() === "-" && this.peek(1) !== undefined && this.peek(1) !== "]") {
        this.i++;
        const high = this.classAtom();
        if (typeof low !== "number" || typeof high !== "number") {
          throw new PatternError("has a range whose end is a class such as \\d");
        }
        if (high < low) throw new PatternError("has a character range out of order");
        text += `${cp(low)}-${cp(high)}`;
      } else text += typeof low === "number" ? cp(low) : low;
    }
  }

  /** One member of a class: a code point, or a class escape (\d, \w, \s and their negations). */
  private classAtom(): number | string {
    const c = this.cs[this.i++]!;
    if (c !== "\\") return c.codePointAt(0)!;
    const e = this.peek();
    if (e === undefined) throw new PatternError("ends with a lone backslash");
    if (e in CLASS_ESCAPES) {
      this.i++;
      return CLASS_ESCAPES[e]!;
    }
    if (e === "b" || e === "B") throw new PatternError("uses \\b inside a character class");
    return this.escapedCodePoint();
  }
}

/** Writes a pattern of the filter dialect in RE2's syntax; throws PatternError saying why it cannot. */
export function toRe2Syntax(pattern: string, maxRepeat: number): string {
  return new Translator(pattern, maxRepeat).translate();
}
