// A regular-expression matcher whose running time is linear in the input: the pattern is compiled to
// an NFA and simulated breadth-first (Thompson's construction, Pike's VM without captures), so no
// pattern can make it backtrack. It accepts the common subset of JavaScript and PCRE syntax and
// refuses what needs backtracking (backreferences, lookaround) or means different things in the two
// (\A, \Z, POSIX classes, inline flags). docs/adr/0014-payload-filters.md says why.

/** Limits on a pattern: its length, the size of its compiled program, and a counted repetition. */
export const REGEX_LIMITS = {
  maxPatternLength: 256,
  maxProgramSize: 512,
  maxRepeat: 50,
} as const;

/** Flags a pattern may carry: i (ignore case), m (^ and $ at line ends), s (. matches newlines). */
export const REGEX_FLAGS = ["i", "m", "s"] as const;

/** A compiled pattern; `test` answers whether it matches anywhere in the input. */
export interface LinearRegex {
  readonly source: string;
  readonly flags: string;
  test(input: string): boolean;
}

type Pred = (cp: number) => boolean;

type Node =
  | { k: "char"; pred: Pred }
  | { k: "seq"; items: Node[] }
  | { k: "alt"; options: Node[] }
  | { k: "repeat"; node: Node; min: number; max: number }
  | { k: "assert"; kind: Assertion };

type Assertion = "bol" | "eol" | "word" | "nonword";

class PatternError extends Error {}

const isDigit: Pred = (c) => c >= 48 && c <= 57;
const isWord: Pred = (c) => isDigit(c) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
const SPACES = new Set([
  0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x20, 0xa0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xfeff,
]);
const isSpace: Pred = (c) => SPACES.has(c) || (c >= 0x2000 && c <= 0x200a);
const isLineEnd: Pred = (c) => c === 0x0a || c === 0x0d || c === 0x2028 || c === 0x2029;
const not =
  (p: Pred): Pred =>
  (c) =>
    !p(c);

const CLASS_ESCAPES: Record<string, Pred> = {
  d: isDigit,
  D: not(isDigit),
  w: isWord,
  W: not(isWord),
  s: isSpace,
  S: not(isSpace),
};
/** The predicate with its answers for ASCII looked up in a table: most text is ASCII. */
function tabled(p: Pred): Pred {
  const table = new Uint8Array(128);
  for (let c = 0; c < 128; c++) table[c] = p(c) ? 1 : 0;
  return (c) => (c < 128 ? table[c] === 1 : p(c));
}

const CONTROL_ESCAPES: Record<string, number> = { n: 0x0a, r: 0x0d, t: 0x09, f: 0x0c, v: 0x0b, "0": 0 };

/** Parses the pattern into a tree; throws PatternError with a message for people. */
class Parser {
  private i = 0;
  private readonly cps: number[];

  constructor(
    pattern: string,
    private readonly ignoreCase: boolean,
    private readonly dotAll: boolean,
  ) {
    this.cps = Array.from(pattern, (ch) => ch.codePointAt(0)!);
  }

  parse(): Node {
    const node = this.alternation();
    if (this.i < this.cps.length) throw new PatternError("has an unmatched )");
    return node;
  }

  private peek(): string | undefined {
    const c = this.cps[this.i];
    return c === undefined ? undefined : String.fromCodePoint(c);
  }

  private alternation(): Node {
    const options = [this.sequence()];
    while (this.peek() === "|") {
      this.i++;
      options.push(this.sequence());
    }
    return options.length === 1 ? options[0]! : { k: "alt", options };
  }

  private sequence(): Node {
    const items: Node[] = [];
    for (;;) {
      const c = this.peek();
      if (c === undefined || c === "|" || c === ")") break;
      const atom = this.atom();
      items.push(this.quantified(atom));
    }
    return items.length === 1 ? items[0]! : { k: "seq", items };
  }

  private quantified(atom: Node): Node {
    const c = this.peek();
    let min: number;
    let max: number;
    if (c === "*") [min, max] = [0, Infinity];
    else if (c === "+") [min, max] = [1, Infinity];
    else if (c === "?") [min, max] = [0, 1];
    else if (c === "{") {
      const counted = this.countedRepeat();
      if (!counted) return atom;
      [min, max] = counted;
    } else return atom;
    if (c !== "{") this.i++;
    if (atom.k === "assert")
      throw new PatternError("repeats an anchor or word boundary, which matches no text");
    // A lazy quantifier matches the same strings as a greedy one; only where the match is differs.
    if (this.peek() === "?") this.i++;
    else if (this.peek() === "+")
      throw new PatternError("uses a possessive quantifier, which is not supported");
    const next = this.peek();
    if (next === "*" || next === "+" || next === "?" || (next === "{" && this.looksCounted())) {
      throw new PatternError("repeats a quantifier (nothing to repeat)");
    }
    return { k: "repeat", node: atom, min, max };
  }

  private looksCounted(): boolean {
    const at = this.i;
    const r = this.countedRepeat();
    this.i = at;
    return r !== null;
  }

  /** `{n}`, `{n,}` or `{n,m}` at the cursor (consumed), or null (left alone: a literal brace). */
  private countedRepeat(): [number, number] | null {
    const rest = String.fromCodePoint(...this.cps.slice(this.i, this.i + 16));
    const m = /^\{(\d+)(,(\d*))?\}/.exec(rest);
    if (!m) return null;
    const min = Number(m[1]);
    const max = m[2] === undefined ? min : m[3] === "" ? Infinity : Number(m[3]);
    if (min > REGEX_LIMITS.maxRepeat || (max !== Infinity && max > REGEX_LIMITS.maxRepeat)) {
      throw new PatternError(`repeats more than ${REGEX_LIMITS.maxRepeat} times`);
    }
    if (max < min) throw new PatternError(`has a repetition {${min},${max}} whose bounds are reversed`);
    this.i += m[0].length;
    return [min, max];
  }

  private atom(): Node {
    const c = this.peek()!;
    this.i++;
    switch (c) {
      case "(":
        return this.group();
      case "[":
        return this.charClass();
      case ".":
        return { k: "char", pred: this.dotAll ? () => true : not(isLineEnd) };
      case "^":
        return { k: "assert", kind: "bol" };
      case "$":
        return { k: "assert", kind: "eol" };
      case "\\":
        return this.escape();
      case "*":
      case "+":
      case "?":
        throw new PatternError(`has nothing for ${c} to repeat`);
      case "{":
        if (this.looksCountedAt(this.i - 1)) throw new PatternError("has nothing for {…} to repeat");
        return this.literal(c.codePointAt(0)!);
      default:
        return this.literal(c.codePointAt(0)!);
    }
  }

  private looksCountedAt(at: number): boolean {
    const keep = this.i;
    this.i = at;
    const counted = this.looksCounted();
    this.i = keep;
    return counted;
  }

  private group(): Node {
    if (this.peek() === "?") {
      const next = String.fromCodePoint(...this.cps.slice(this.i, this.i + 3));
      if (next.startsWith("?:")) this.i += 2;
      else if (
        next.startsWith("?=") ||
        next.startsWith("?!") ||
        next.startsWith("?<=") ||
        next.startsWith("?<!")
      ) {
        throw new PatternError("uses lookahead or lookbehind, which is not supported");
      } else if (next.startsWith("?<") || next.startsWith("?P<")) {
        const close = this.cps.indexOf(">".codePointAt(0)!, this.i);
        if (close === -1) throw new PatternError("has an unfinished group name");
        this.i = close + 1;
      } else throw new PatternError("uses an inline flag or group kind that is not supported; use $options");
    }
    const inner = this.alternation();
    if (this.peek() !== ")") throw new PatternError("has an unclosed (");
    this.i++;
    // Wrapped, so a group holding only an anchor may be repeated, as JavaScript allows: (^)?
    return { k: "seq", items: [inner] };
  }

  private literal(cp: number): Node {
    return { k: "char", pred: this.caseless((c) => c === cp) };
  }

  private caseless(p: Pred): Pred {
    if (!this.ignoreCase) return p;
    return (c) => p(c) || p(foldCase(c, "lower")) || p(foldCase(c, "upper"));
  }

  private escape(): Node {
    const c = this.peek();
    if (c === undefined) throw new PatternError("ends with a lone backslash");
    if (c === "b" || c === "B") {
      this.i++;
      return { k: "assert", kind: c === "b" ? "word" : "nonword" };
    }
    const cls = CLASS_ESCAPES[c];
    if (cls) {
      this.i++;
      return { k: "char", pred: cls };
    }
    return this.literal(this.escapedCodePoint());
  }

  /** The code point of an escape (the backslash consumed) that stands for one character. */
  private escapedCodePoint(): number {
    const c = this.peek()!;
    this.i++;
    if (c in CONTROL_ESCAPES) {
      if (c === "0" && isDigit(this.cps[this.i] ?? -1))
        throw new PatternError("uses an octal escape; use \\xHH");
      return CONTROL_ESCAPES[c]!;
    }
    if (/^[1-9]$/.test(c) || c === "k")
      throw new PatternError("uses a backreference, which is not supported");
    if (c === "x") return this.hex(2);
    if (c === "u") {
      if (this.peek() === "{") {
        const close = this.cps.indexOf("}".codePointAt(0)!, this.i);
        const digits = close === -1 ? "" : String.fromCodePoint(...this.cps.slice(this.i + 1, close));
        if (!/^[0-9a-fA-F]{1,6}$/.test(digits) || Number.parseInt(digits, 16) > 0x10ffff) {
          throw new PatternError("has a malformed \\u{…} escape");
        }
        this.i = close + 1;
        return Number.parseInt(digits, 16);
      }
      return this.hex(4);
    }
    if (/^[A-Za-z0-9]$/.test(c)) {
      throw new PatternError(
        `uses \\${c}, which is not supported (it means different things in different regex dialects)`,
      );
    }
    return c.codePointAt(0)!;
  }

  private hex(n: number): number {
    const digits = String.fromCodePoint(...this.cps.slice(this.i, this.i + n));
    if (digits.length !== n || !/^[0-9a-fA-F]+$/.test(digits))
      throw new PatternError("has a malformed hex escape");
    this.i += n;
    return Number.parseInt(digits, 16);
  }

  private charClass(): Node {
    let negated = false;
    if (this.peek() === "^") {
      negated = true;
      this.i++;
    }
    if (this.peek() === "]") throw new PatternError("has an empty character class [] or [^]");
    const members: Pred[] = [];
    for (;;) {
      const c = this.peek();
      if (c === undefined) throw new PatternError("has an unclosed [");
      if (c === "]") {
        this.i++;
        break;
      }
      if (c === "[" && this.cps[this.i + 1] === ":".codePointAt(0)) {
        throw new PatternError("uses a POSIX class such as [:alpha:], which is not supported");
      }
      const low = this.classAtom();
      if (this.peek() === "-" && this.cps[this.i + 1] !== undefined && this.cps[this.i + 1] !== 0x5d) {
        this.i++;
        const high = this.classAtom();
        if (typeof low !== "number" || typeof high !== "number") {
          throw new PatternError("has a range whose end is a class such as \\d");
        }
        if (high < low) throw new PatternError("has a character range out of order");
        members.push((x) => x >= low && x <= high);
      } else {
        members.push(typeof low === "number" ? (x) => x === low : low);
      }
    }
    const any = this.caseless((x) => members.some((m) => m(x)));
    return { k: "char", pred: negated ? not(any) : any };
  }

  /** One member of a class: a code point, or a class escape (\d, \w, \s and their negations). */
  private classAtom(): number | Pred {
    const c = this.peek()!;
    this.i++;
    if (c !== "\\") return c.codePointAt(0)!;
    const e = this.peek();
    if (e === undefined) throw new PatternError("ends with a lone backslash");
    const cls = CLASS_ESCAPES[e];
    if (cls) {
      this.i++;
      return cls;
    }
    if (e === "b" || e === "B") throw new PatternError("uses \\b inside a character class");
    return this.escapedCodePoint();
  }
}

function foldCase(cp: number, to: "lower" | "upper"): number {
  const s = String.fromCodePoint(cp);
  const folded = to === "lower" ? s.toLowerCase() : s.toUpperCase();
  const first = folded.codePointAt(0)!;
  // Only one-to-one mappings (ß → SS is not a single character).
  return folded.length === String.fromCodePoint(first).length ? first : cp;
}

// The program: parallel arrays of instructions.
const CHAR = 0;
const SPLIT = 1;
const JMP = 2;
const ASSERT = 3;
const MATCH = 4;

interface Program {
  op: number[];
  x: number[];
  y: number[];
  preds: Pred[];
  asserts: Assertion[];
}

/** Compiles the tree into the program; throws when it would pass the size limit. */
function compile(root: Node): Program {
  const p: Program = { op: [], x: [], y: [], preds: [], asserts: [] };
  const emit = (op: number, x = 0, y = 0) => {
    if (p.op.length >= REGEX_LIMITS.maxProgramSize) {
      throw new PatternError(
        `is too large once its repetitions are expanded (over ${REGEX_LIMITS.maxProgramSize} steps)`,
      );
    }
    p.op.push(op);
    p.x.push(x);
    p.y.push(y);
    return p.op.length - 1;
  };
  const gen = (n: Node): void => {
    switch (n.k) {
      case "char":
        p.preds.push(tabled(n.pred));
        emit(CHAR, p.preds.length - 1);
        return;
      case "assert":
        p.asserts.push(n.kind);
        emit(ASSERT, p.asserts.length - 1);
        return;
      case "seq":
        for (const item of n.items) gen(item);
        return;
      case "alt": {
        const jumps: number[] = [];
        n.options.forEach((option, i) => {
          if (i < n.options.length - 1) {
            const split = emit(SPLIT);
            p.x[split] = split + 1;
            gen(option);
            jumps.push(emit(JMP));
            p.y[split] = p.op.length;
          } else gen(option);
        });
        for (const j of jumps) p.x[j] = p.op.length;
        return;
      }
      case "repeat": {
        for (let i = 0; i < n.min; i++) gen(n.node);
        if (n.max === Infinity) {
          const split = emit(SPLIT);
          p.x[split] = split + 1;
          gen(n.node);
          emit(JMP, split);
          p.y[split] = p.op.length;
        } else {
          const splits: number[] = [];
          for (let i = n.min; i < n.max; i++) {
            const split = emit(SPLIT);
            p.x[split] = split + 1;
            splits.push(split);
            gen(n.node);
          }
          for (const s of splits) p.y[s] = p.op.length;
        }
        return;
      }
    }
  };
  gen(root);
  emit(MATCH);
  return p;
}

const holds = (kind: Assertion, before: number, after: number, multiline: boolean): boolean => {
  switch (kind) {
    case "bol":
      return before === -1 || (multiline && isLineEnd(before));
    case "eol":
      return after === -1 || (multiline && isLineEnd(after));
    case "word":
      return isWord(before) !== isWord(after);
    case "nonword":
      return isWord(before) === isWord(after);
  }
};

/** A set of NFA threads, as a state of the lazily built DFA, with the transitions seen so far. */
interface DfaState {
  /** CHAR instructions waiting for the next character. */
  threads: number[];
  /** A thread reached MATCH: the pattern matched. */
  matched: boolean;
  /** Transitions on ASCII characters, by key (character × 4 + what follows it): the common case. */
  ascii: (DfaState | undefined)[];
  next: Map<number, DfaState>;
}

// What the character after a position is, for the anchors and \b: all they need to know of it.
const OTHER = 0;
const WORD = 1;
const LINE_END = 2;
const END = 3;
/** One character of each kind, to evaluate the assertions with. */
const SAMPLE = [0x20, 0x61, 0x0a, -1];
const kindOf = (c: number | undefined): number =>
  c === undefined ? END : isWord(c) ? WORD : isLineEnd(c) ? LINE_END : OTHER;

const ASCII_KEYS = 128 * 4;

/** The most DFA states and transitions kept per pattern; past that the cache starts again. */
const DFA_CACHE_LIMIT = 256;

/**
 * Runs a program over inputs, one step per character. The NFA is simulated breadth-first (each
 * instruction at most once per position, so the work per character is bounded by the program's size)
 * and the sets of threads it passes through are cached as DFA states, so text the pattern has seen
 * the like of costs one map lookup per character.
 */
class Machine {
  private readonly seen: Int32Array;
  private stamp = 0;
  private readonly stack: number[] = [];
  private states = new Map<string, DfaState>();
  private cached = 0;
  private overflowed = false;
  private readonly usesAssertions: boolean;

  constructor(
    private readonly p: Program,
    private readonly multiline: boolean,
  ) {
    this.seen = new Int32Array(p.op.length);
    this.usesAssertions = p.asserts.length > 0;
  }

  test(input: string): boolean {
    // The input is walked by code point in place: copying it into an array first cost more than matching.
    const n = input.length;
    let state = this.start(this.usesAssertions ? kindOf(input.codePointAt(0)) : OTHER);
    for (let i = 0; !state.matched; ) {
      if (i >= n) return false;
      // A pattern whose thread sets keep changing (a DFA that would be exponential) gains nothing
      // from the cache: once it has overflowed, the NFA runs on its own.
      if (this.overflowed) return this.simulate(input, i, state.threads);
      const c = input.codePointAt(i)!;
      i += c > 0xffff ? 2 : 1;
      const key = c * 4 + (this.usesAssertions ? kindOf(input.codePointAt(i)) : OTHER);
      state = (key < ASCII_KEYS ? state.ascii[key] : state.next.get(key)) ?? this.step(state, c, key);
    }
    return true;
  }

  /** The plain NFA from string index `i` with these threads. */
  private simulate(input: string, i: number, threads: readonly number[]): boolean {
    let current = threads;
    while (i < input.length) {
      const c = input.codePointAt(i)!;
      i += c > 0xffff ? 2 : 1;
      const after = input.codePointAt(i) ?? -1;
      const next: number[] = [];
      this.stamp++;
      for (const q of current) {
        if (this.p.preds[this.p.x[q]!]!(c) && this.add(next, q + 1, c, after)) return true;
      }
      if (this.add(next, 0, c, after)) return true;
      current = next;
    }
    return false;
  }

  private start(afterKind: number): DfaState {
    const key = `start:${afterKind}`;
    const known = this.states.get(key);
    if (known) return known;
    const threads: number[] = [];
    this.stamp++;
    const matched = this.add(threads, 0, -1, SAMPLE[afterKind]!);
    return this.remember(key, threads, matched);
  }

  /** The state after `c`: the threads that accept it advance, and a new one starts (match anywhere). */
  private step(from: DfaState, c: number, key: number): DfaState {
    const after = SAMPLE[key & 3]!;
    const threads: number[] = [];
    this.stamp++;
    let matched = false;
    for (const q of from.threads) {
      if (this.p.preds[this.p.x[q]!]!(c) && this.add(threads, q + 1, c, after)) matched = true;
    }
    if (!matched && this.add(threads, 0, c, after)) matched = true;
    threads.sort((a, b) => a - b);
    const id = matched ? "match" : threads.join(",");
    const state = this.states.get(id) ?? this.remember(id, threads, matched);
    if (++this.cached > DFA_CACHE_LIMIT * 16) this.overflowed = true;
    else if (key < ASCII_KEYS) from.ascii[key] = state;
    else from.next.set(key, state);
    return state;
  }

  private remember(id: string, threads: number[], matched: boolean): DfaState {
    if (this.states.size >= DFA_CACHE_LIMIT) {
      this.states = new Map();
      this.overflowed = true;
    }
    const state: DfaState = { threads, matched, ascii: [], next: new Map() };
    this.states.set(id, state);
    return state;
  }

  /** Adds the threads reachable from pc without consuming input; true when one of them is MATCH. */
  private add(list: number[], pc: number, before: number, after: number): boolean {
    const { p, seen, stack, stamp } = this;
    stack.push(pc);
    while (stack.length > 0) {
      const q = stack.pop()!;
      if (seen[q] === stamp) continue;
      seen[q] = stamp;
      switch (p.op[q]) {
        case MATCH:
          stack.length = 0;
          return true;
        case CHAR:
          list.push(q);
          break;
        case JMP:
          stack.push(p.x[q]!);
          break;
        case SPLIT:
          stack.push(p.y[q]!, p.x[q]!);
          break;
        case ASSERT:
          if (holds(p.asserts[p.x[q]!]!, before, after, this.multiline)) stack.push(q + 1);
          break;
      }
    }
    return false;
  }
}

/**
 * Compiles a pattern with flags from REGEX_FLAGS, or says why it cannot: too long, too large, or
 * using syntax this matcher refuses (backreferences, lookaround, possessive quantifiers, ...).
 */
export function compileLinearRegex(
  pattern: string,
  flags = "",
): { ok: true; regex: LinearRegex } | { ok: false; message: string } {
  if (pattern.length > REGEX_LIMITS.maxPatternLength) {
    return { ok: false, message: `must be at most ${REGEX_LIMITS.maxPatternLength} characters long` };
  }
  for (const f of flags) {
    if (!(REGEX_FLAGS as readonly string[]).includes(f)) {
      return { ok: false, message: `has an unsupported flag "${f}" (use ${REGEX_FLAGS.join(", ")})` };
    }
  }
  try {
    const tree = new Parser(pattern, flags.includes("i"), flags.includes("s")).parse();
    const machine = new Machine(compile(tree), flags.includes("m"));
    return { ok: true, regex: { source: pattern, flags, test: (input) => machine.test(input) } };
  } catch (e) {
    if (e instanceof PatternError) return { ok: false, message: e.message };
    throw e;
  }
}
