import { describe, expect, it } from "vitest";
import { compileFilterRegex, REGEX_LIMITS } from "../../src/domain/event-filter-regex.ts";

const compiled = (pattern: string, flags = "") => {
  const r = compileFilterRegex(pattern, flags);
  if (!r.ok) throw new Error(`${pattern}: ${r.message}`);
  return r.regex;
};
/** JavaScript's own RegExp, in Unicode mode where the pattern allows it (code points, like ours). */
const reference = (pattern: string, flags: string) => {
  try {
    return new RegExp(pattern, `${flags}u`);
  } catch {
    return new RegExp(pattern, flags);
  }
};
const refusal = (pattern: string, flags = "") => {
  const r = compileFilterRegex(pattern, flags);
  if (r.ok) throw new Error(`${pattern} compiled`);
  return r.message;
};

describe("linear-time regular expressions", () => {
  // [pattern, flags, input, whether it matches]; each case is also checked against JavaScript's RegExp,
  // whose answers these must equal on the syntax both accept.
  const CASES: [string, string, string, boolean][] = [
    ["abc", "", "xxabcxx", true],
    ["abc", "", "ab", false],
    ["", "", "", true],
    ["", "", "anything", true],
    ["^abc$", "", "abc", true],
    ["^abc$", "", "abcd", false],
    ["^abc$", "", "\nabc", false],
    ["^b", "m", "a\nb", true],
    ["a$", "m", "a\nb", true],
    ["a$", "", "a\nb", false],
    ["a|b", "", "c", false],
    ["a|b", "", "xb", true],
    ["(a|b)+c", "", "ababc", true],
    ["(?:ab)+$", "", "abab", true],
    ["(?<name>ab)c", "", "abc", true],
    ["a{2}", "", "a", false],
    ["a{2,3}", "", "xaa", true],
    ["^a{2,3}$", "", "aaaa", false],
    ["^a{2,}$", "", "aaaaaaaa", true],
    ["^a{0}b$", "", "b", true],
    ["a*?b", "", "aaab", true],
    ["colou?r", "", "color", true],
    ["colou?r", "", "colour", true],
    ["[a-c]+x", "", "zbx", true],
    ["[^a-c]", "", "abc", false],
    ["[^a-c]", "", "abcd", true],
    ["[a-]", "", "-", true],
    ["[\\]]", "", "]", true],
    ["[\\d.]+", "", "3.14", true],
    ["\\d{3}", "", "ab123", true],
    ["\\D", "", "123", false],
    ["\\w+@\\w+\\.com$", "", "ada@example.com", true],
    ["\\W", "", "abc_1", false],
    ["\\s", "", "a\u00a0b", true],
    ["\\S", "", " \t\n", false],
    ["\\bfoo\\b", "", "a foo b", true],
    ["\\bfoo\\b", "", "afoob", false],
    ["\\Boo\\B", "", "afoob", true],
    ["ABC", "i", "xabcx", true],
    ["[A-C]+", "i", "abc", true],
    ["[^a]", "i", "A", false],
    ["é", "i", "É", true],
    ["a.c", "", "abc", true],
    ["a.c", "", "a\nc", false],
    ["a.c", "s", "a\nc", true],
    ["\\x41\\u0042\\u{43}", "", "ABC", true],
    ["\\t\\n", "", "\t\n", true],
    ["\\.", "", "a", false],
    ["\\/\\*\\+\\?", "", "/*+?", true],
    ["a{,5}", "", "a{,5}", true],
    ["a}", "", "a}", true],
    ["😀+$", "", "x😀😀", true],
    ["\\uD83D\\uDE00", "", "😀", true],
    ["[\\uD83D\\uDE00]", "", "😀", true],
    ["\\uD800", "", "\uD800", true],
    ["^.$", "", "😀", true],
    ["x?", "", "", true],
    ["(a*)*b", "", "aaaa", false],
    ["(?:^)?b", "", "ab", true],
    ["(\\b){2}a", "", " a", true],
    ["(\\b)+a", "", "ba", false],
  ];

  it.each(CASES)("/%s/%s on %j matches: %s (as JavaScript's RegExp does)", (pattern, flags, input, want) => {
    expect(compiled(pattern, flags).test(input)).toBe(want);
    expect(reference(pattern, flags).test(input)).toBe(want);
  });

  it("answers as JavaScript's RegExp does on thousands of random patterns of the shared syntax", () => {
    let seed = 11;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed / 2_147_483_648;
    };
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)]!;
    const ATOMS = [
      "a",
      "b",
      ".",
      "\\d",
      "\\w",
      "\\s",
      "\\W",
      "[ab]",
      "[^a]",
      "[a-c]",
      "\\.",
      " ",
      "\n",
      "A",
      "1",
    ];
    const ANCHORS = ["^", "$", "\\b", "\\B"];
    const QUANTIFIERS = ["", "", "", "*", "+", "?", "{2}", "{1,3}", "{0,}", "*?", "+?"];
    const pattern = (depth: number): string => {
      let text = "";
      for (let n = 1 + Math.floor(random() * 4); n > 0; n--) {
        const k = random();
        if (k < 0.1) {
          text += pick(ANCHORS);
          continue;
        }
        const group = depth < 3 && k < 0.35;
        const atom = group
          ? `(${random() < 0.5 ? "?:" : ""}${pattern(depth + 1)}${random() < 0.4 ? `|${pattern(depth + 1)}` : ""})`
          : pick(ATOMS);
        text += atom + pick(QUANTIFIERS);
      }
      return text;
    };
    const input = () =>
      Array.from({ length: Math.floor(random() * 10) }, () =>
        pick(["a", "b", "c", "A", "1", " ", "\n", ".", "_"]),
      ).join("");
    let compared = 0;
    for (let i = 0; i < 2_000; i++) {
      const source = pattern(0);
      const flags = pick(["", "i", "m", "s", "im"]);
      const ours = compiled(source, flags);
      const theirs = new RegExp(source, `${flags}u`);
      for (let j = 0; j < 5; j++) {
        const text = input();
        expect(ours.test(text), `/${source}/${flags} on ${JSON.stringify(text)}`).toBe(theirs.test(text));
        compared++;
      }
    }
    expect(compared).toBe(10_000);
  });

  it("refuses what needs backtracking or means different things in different dialects", () => {
    expect(refusal("(a)\\1")).toMatch(/backreference/);
    expect(refusal("(?<n>a)\\k<n>")).toMatch(/backreference/);
    expect(refusal("(?=a)")).toMatch(/lookahead or lookbehind/);
    expect(refusal("(?!a)")).toMatch(/lookahead or lookbehind/);
    expect(refusal("(?<=a)b")).toMatch(/lookahead or lookbehind/);
    expect(refusal("(?<!a)b")).toMatch(/lookahead or lookbehind/);
    expect(refusal("(?i)a")).toMatch(/inline flag/);
    expect(refusal("a*+")).toMatch(/possessive/);
    expect(refusal("a**")).toMatch(/nothing to repeat/);
    expect(refusal("*a")).toMatch(/nothing for \* to repeat/);
    expect(refusal("{2}")).toMatch(/nothing for/);
    expect(refusal("^*")).toMatch(/anchor/);
    expect(refusal("[]")).toMatch(/empty character class/);
    expect(refusal("[^]")).toMatch(/empty character class/);
    expect(refusal("[[:alpha:]]")).toMatch(/POSIX/);
    expect(refusal("\\A")).toMatch(/\\A/);
    expect(refusal("\\Z")).toMatch(/\\Z/);
    expect(refusal("\\p{L}")).toMatch(/\\p/);
    expect(refusal("\\01")).toMatch(/octal/);
    expect(refusal("[\\d-z]")).toMatch(/range/);
    expect(refusal("[z-a]")).toMatch(/out of order/);
    expect(refusal("[\\b]")).toMatch(/\\b inside/);
    expect(refusal("a{3,2}")).toMatch(/reversed/);
    expect(refusal("(")).toMatch(/unclosed \(/);
    expect(refusal(")")).toMatch(/unmatched \)/);
    expect(refusal("[a")).toMatch(/unclosed \[/);
    expect(refusal("\\")).toMatch(/lone backslash/);
    expect(refusal("\\x4")).toMatch(/hex escape/);
    expect(refusal("\\u{110000}")).toMatch(/\\u\{…\}/);
    expect(refusal("a", "x")).toMatch(/unsupported flag "x"/);
    expect(refusal("a", "g")).toMatch(/unsupported flag "g"/);
  });

  it("limits the pattern's length, repetition counts and compiled size", () => {
    expect(compileFilterRegex("a".repeat(REGEX_LIMITS.maxPatternLength)).ok).toBe(true);
    expect(refusal("a".repeat(REGEX_LIMITS.maxPatternLength + 1))).toBe(
      `must be at most ${REGEX_LIMITS.maxPatternLength} characters long`,
    );
    expect(compileFilterRegex(`a{${REGEX_LIMITS.maxRepeat}}`).ok).toBe(true);
    expect(refusal(`a{${REGEX_LIMITS.maxRepeat + 1}}`)).toMatch(/more than 50 times/);
    expect(refusal("a{1,51}")).toMatch(/more than 50 times/);
    // Nested counted repetitions multiply: refused once the expansion passes the program limit.
    expect(refusal("((a{50}){50}){50}")).toMatch(/too large/);
    expect(refusal("(.{0,50}){10}")).toMatch(/too large/);
  });

  it("takes linear time on patterns that make a backtracking engine explode", () => {
    const evil = [
      ["(a+)+$", `${"a".repeat(20_000)}!`],
      ["(a*)*b", "a".repeat(20_000)],
      ["(a|a)*c", "a".repeat(20_000)],
      ["(\\w+\\s?)+$", `${"word ".repeat(4_000)}!`],
      ["^(a|b)*a[ab]{12}$", "ab".repeat(10_000)],
      ["(.*a){20}", "a".repeat(8_000)],
    ] as const;
    for (const [pattern, input] of evil) {
      const regex = compiled(pattern);
      const t0 = performance.now();
      regex.test(input);
      // A backtracking engine needs years here; the bound leaves room for a loaded machine.
      expect(performance.now() - t0, pattern).toBeLessThan(2_000);
    }
    expect(compiled("(a+)+$").test(`${"a".repeat(20_000)}!`)).toBe(false);
    expect(compiled("(a*)*b").test("a".repeat(20_000))).toBe(false);
    expect(compiled("(.*a){20}").test("a".repeat(8_000))).toBe(true);
  });

  it("answers the same after its cache of states fills up", () => {
    // (a|b)*a[ab]{10}$ needs 2^11 DFA states: the cache overflows and the NFA carries on alone.
    const regex = compiled("(a|b)*a[ab]{10}$");
    let seed = 7;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed / 2_147_483_648;
    };
    const reference = /(a|b)*a[ab]{10}$/;
    for (let i = 0; i < 200; i++) {
      const input = Array.from({ length: 40 }, () => (random() < 0.5 ? "a" : "b")).join("");
      expect(regex.test(input), input).toBe(reference.test(input));
    }
  });
});

describe("the i flag: Unicode simple case folding, throughout", () => {
  // One rule (docs/adr/0014-payload-filters.md): two characters are the same letter when Unicode's
  // simple case folding (CaseFolding.txt, statuses C and S) maps them to the same character, as in RE2
  // and in JavaScript's RegExp with the u flag. So the Kelvin sign is a K and the long s an s, while
  // the dotless ı and the dotted İ are letters of their own; literals, classes and ranges alike.
  it.each([
    ["k", "\u212a", true],
    ["K", "\u212a", true],
    ["\u212a", "k", true],
    ["s", "ſ", true],
    ["S", "ſ", true],
    ["ſ", "s", true],
    ["I", "ı", false],
    ["i", "ı", false],
    ["ı", "I", false],
    ["i", "İ", false],
    ["[a-z]", "\u212a", true],
    ["[a-z]", "ſ", true],
    ["[^k]", "\u212a", false],
    ["[^s]", "ſ", false],
    ["[h-j]", "ı", false],
    ["é", "É", true],
    ["σ", "ς", true],
    ["\\x4b", "\u212a", true],
  ] as const)("/%s/i on %j matches: %s", (pattern, input, want) => {
    expect(compiled(pattern, "i").test(input)).toBe(want);
    expect(new RegExp(pattern, "iu").test(input)).toBe(want);
    // Without the flag only the character itself matches.
    if (input !== pattern) expect(compiled(pattern).test(input)).toBe(new RegExp(pattern, "u").test(input));
  });

  it("folds every character of the Basic Multilingual Plane as JavaScript's u flag does", () => {
    let compared = 0;
    for (let c = 0x41; c < 0x10000; c++) {
      if (c >= 0xd800 && c <= 0xdfff) continue;
      const ch = String.fromCodePoint(c);
      // The other characters a fold could join it with: its lower and upper cases, and theirs.
      const others = new Set([ch.toLowerCase(), ch.toUpperCase(), ch.toUpperCase().toLowerCase()]);
      others.delete(ch);
      if (others.size === 0) continue;
      const ours = compiled(`\\u{${c.toString(16)}}`, "i");
      const theirs = new RegExp(`\\u{${c.toString(16)}}`, "iu");
      for (const other of others) {
        expect(ours.test(other), `U+${c.toString(16)} on ${JSON.stringify(other)}`).toBe(theirs.test(other));
        compared++;
      }
    }
    expect(compared).toBeGreaterThan(2_000);
  });
});
