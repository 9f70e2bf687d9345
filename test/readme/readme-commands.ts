/** One command of the README: its text exactly as written (continuation lines included) and where. */
export interface ReadmeCommand {
  text: string;
  /** The section heading above it. */
  section: string;
  /** 1-based line of the README where it starts. */
  line: number;
}

/**
 * Every command of every ```sh block, in order. A command is a line, or several when a quote or a
 * trailing backslash carries it on; comment lines and blank lines are not commands.
 */
export function readmeCommands(markdown: string): ReadmeCommand[] {
  const commands: ReadmeCommand[] = [];
  const lines = markdown.split("\n");
  let section = "";
  let inBlock = false;
  let pending: { text: string[]; line: number } | null = null;
  lines.forEach((raw, i) => {
    if (!inBlock) {
      if (/^#{1,6} /.test(raw)) section = raw.replace(/^#+ /, "");
      if (/^```(sh|bash|shell)\s*$/.test(raw)) inBlock = true;
      return;
    }
    if (pending === null && /^```\s*$/.test(raw)) {
      inBlock = false;
      return;
    }
    if (pending === null) {
      if (/^\s*(#|$)/.test(raw)) return;
      pending = { text: [raw], line: i + 1 };
    } else {
      pending.text.push(raw);
    }
    const text = pending.text.join("\n");
    if (!continues(text)) {
      commands.push({ text, section, line: pending.line });
      pending = null;
    }
  });
  if (pending) throw new Error(`README: an unfinished command at line ${(pending as { line: number }).line}`);
  return commands;
}

/** Whether a command goes on to the next line: an open quote, or a backslash at the end. */
function continues(text: string): boolean {
  let quote: "'" | '"' | null = null;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote === "'") {
      if (c === "'") quote = null;
    } else if (quote === '"') {
      if (c === "\\") i++;
      else if (c === '"') quote = null;
    } else if (c === "\\") {
      if (i === text.length - 1) return true;
      i++;
    } else if (c === "'" || c === '"') {
      quote = c;
    } else if (c === "#" && (i === 0 || /\s/.test(text[i - 1]!))) {
      // a comment runs to the end of its line
      const end = text.indexOf("\n", i);
      if (end === -1) break;
      i = end;
    }
  }
  return quote !== null;
}

/** The command without a trailing `# comment` on its last line (for matching and backgrounding). */
export function withoutComment(text: string): string {
  const lines = text.split("\n");
  const last = lines.pop()!;
  let quote: string | null = null;
  let cut = last.length;
  for (let i = 0; i < last.length; i++) {
    const c = last[i];
    if (quote) {
      if (c === quote) quote = null;
    } else if (c === "'" || c === '"') {
      quote = c;
    } else if (c === "#" && (i === 0 || /\s/.test(last[i - 1]!))) {
      cut = i;
      break;
    }
  }
  return [...lines, last.slice(0, cut).trimEnd()].join("\n");
}
