// A payload filter's $regex, matched by re2js (a port of RE2: linear time in the input, no
// backtracking). event-filter-regex-dialect.ts reads the pattern in the dialect filters accept and
// writes it in RE2's syntax; this module compiles it within the limits below.
// docs/adr/0014-payload-filters.md says why, and the few places RE2's answers are kept.
import { RE2JS } from "re2js";
import { PatternError, toRe2Syntax } from "./event-filter-regex-dialect.ts";

/** Limits on a pattern: its length, the size of its compiled program, and a counted repetition. */
export const REGEX_LIMITS = {
  maxPatternLength: 256,
  maxProgramSize: 512,
  maxRepeat: 50,
} as const;

/** Flags a pattern may carry: i (ignore case), m (^ and $ at line ends), s (. matches newlines). */
export const REGEX_FLAGS = ["i", "m", "s"] as const;

/** A compiled pattern; `test` answers whether it matches anywhere in the input. */
export interface FilterRegex {
  readonly source: string;
  readonly flags: string;
  test(input: string): boolean;
}

const TOO_LARGE = `is too large once its repetitions are expanded (over ${REGEX_LIMITS.maxProgramSize} steps)`;

/**
 * Compiles a pattern with flags from REGEX_FLAGS, or says why it cannot: too long, too large, or
 * using syntax filters refuse (backreferences, lookaround, possessive quantifiers, ...).
 */
export function compileFilterRegex(
  pattern: string,
  flags = "",
): { ok: true; regex: FilterRegex } | { ok: false; message: string } {
  if (pattern.length > REGEX_LIMITS.maxPatternLength) {
    return { ok: false, message: `must be at most ${REGEX_LIMITS.maxPatternLength} characters long` };
  }
  let bits = 0;
  for (const f of flags) {
    if (!(REGEX_FLAGS as readonly string[]).includes(f)) {
      return { ok: false, message: `has an unsupported flag "${f}" (use ${REGEX_FLAGS.join(", ")})` };
    }
    bits |= f === "i" ? RE2JS.CASE_INSENSITIVE : f === "m" ? RE2JS.MULTILINE : RE2JS.DOTALL;
  }
  let translated: string;
  try {
    translated = toRe2Syntax(pattern, REGEX_LIMITS.maxRepeat);
  } catch (e) {
    if (e instanceof PatternError) return { ok: false, message: e.message };
    throw e;
  }
  let re: RE2JS;
  try {
    // Unicode groups (\p) are refused above already; the flag keeps it so should the reading change.
    re = RE2JS.compile(translated, bits | RE2JS.DISABLE_UNICODE_GROUPS);
  } catch (e) {
    // The translation writes only syntax RE2 accepts, so what RE2 still refuses is size: nested counted
    // repetitions multiply past its own limit of 1,000.
    if (e instanceof Error && /repeat count|too large/.test(e.message))
      return { ok: false, message: TOO_LARGE };
    return { ok: false, message: `is not a regular expression filters accept (${(e as Error).message})` };
  }
  // The program's size bounds the work per character of input.
  if (re.programSize() > REGEX_LIMITS.maxProgramSize) return { ok: false, message: TOO_LARGE };
  return { ok: true, regex: { source: pattern, flags, test: (input) => re.test(input) } };
}
