// Herald Console: the few things a server-rendered page cannot do alone. Every page works without it.

/** Shows each <time> in the viewer's zone; the UTC value stays in the title (hover). */
function localTimes(root) {
  const format = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "medium" });
  for (const t of root.querySelectorAll("time[datetime]")) {
    const d = new Date(t.getAttribute("datetime"));
    if (Number.isNaN(d.getTime())) continue;
    t.textContent = format.format(d);
    t.title = `${d.toISOString()} (UTC)`;
  }
}

/** Copy buttons: data-copy names the element whose text is copied. */
function copyButtons(root) {
  for (const b of root.querySelectorAll("button[data-copy]")) {
    b.addEventListener("click", async () => {
      const source = document.getElementById(b.dataset.copy);
      if (!source) return;
      try {
        // data-raw: bytes as sent, copied untouched (a body's whitespace is part of its signature).
        const text = source.hasAttribute("data-raw") ? source.textContent : source.textContent.trim();
        await navigator.clipboard.writeText(text);
        b.textContent = "Copied";
      } catch {
        const range = document.createRange();
        range.selectNodeContents(source);
        getSelection().removeAllRanges();
        getSelection().addRange(range);
        b.textContent = "Selected: press Ctrl+C";
      }
    });
  }
}

function cell(text, className) {
  const td = document.createElement("td");
  if (className) td.className = className;
  if (text instanceof Node) td.append(text);
  else td.textContent = text ?? "";
  return td;
}

function link(href, text, label) {
  const a = document.createElement("a");
  a.href = href;
  a.textContent = text;
  if (label) a.setAttribute("aria-label", label);
  return a;
}

function timeNode(iso) {
  const t = document.createElement("time");
  t.setAttribute("datetime", iso);
  t.textContent = iso;
  return t;
}

/** The live page: one row per attempt from the server's event stream, updated in place. */
function liveFeed() {
  const box = document.querySelector("[data-live]");
  if (!box) return;
  const base = box.dataset.base;
  const body = box.querySelector("tbody");
  const state = document.getElementById("live-state");
  const source = new EventSource(box.dataset.live);
  source.addEventListener("ready", () => {
    state.textContent = "Live: new attempts appear below as they happen.";
  });
  source.addEventListener("error", () => {
    state.textContent = "Reconnecting…";
  });
  source.addEventListener("delivery", (e) => {
    const d = JSON.parse(e.data);
    const badge = document.createElement("span");
    badge.className = `badge s-${d.status}`;
    badge.textContent = d.status;
    const tr = document.createElement("tr");
    tr.dataset.id = d.id;
    tr.className = "fresh";
    const attempt = document.createElement("span");
    attempt.textContent = `${d.attempt}${d.trigger === "manual" ? " manual" : ""}`;
    tr.append(
      cell(timeNode(d.created_at)),
      cell(badge),
      cell(link(`${base}/events/${d.event_id}`, d.event_type)),
      cell(link(`${base}/endpoints/${d.webhook_id}`, d.endpoint_url), "small"),
      cell(attempt, "num"),
      cell(d.response_status === null ? "—" : String(d.response_status), "num"),
      cell(d.error ?? ""),
      cell(
        link(`${base}/deliveries/${d.id}`, "Details", `Details of attempt ${d.attempt} of ${d.event_type}`),
      ),
    );
    const old = body.querySelector(`tr[data-id="${CSS.escape(d.id)}"]`);
    if (old) old.replaceWith(tr);
    else body.prepend(tr);
    localTimes(tr);
  });
}

/**
 * An attempt page showing a pending attempt: listens on the live channel for that event's attempts to
 * this endpoint, and when one differs from what the page shows, swaps in the page as it is now.
 */
function followAttempt() {
  const box = document.querySelector("[data-follow]");
  if (!box) return;
  const shown = new Map();
  for (const el of document.querySelectorAll("[data-attempt]"))
    shown.set(el.dataset.attempt, el.dataset.state);
  const source = new EventSource(box.dataset.follow);
  source.addEventListener("delivery", async (e) => {
    const d = JSON.parse(e.data);
    if (shown.get(d.id) === `${d.status} ${d.attempted_at ?? ""}`) return;
    source.close();
    try {
      const res = await fetch(location.href, { credentials: "same-origin" });
      const main = new DOMParser().parseFromString(await res.text(), "text/html").querySelector("main");
      // Signed out meanwhile (a redirect to sign in) or an error: a plain reload shows it as it is.
      if (!res.ok || res.redirected || !main) throw new Error(`HTTP ${res.status}`);
      document.querySelector("main").replaceWith(main);
      localTimes(main);
      copyButtons(main);
      followAttempt();
    } catch {
      location.reload();
    }
  });
}

/**
 * The new endpoint form's kind: only the chosen kind's fieldset is shown, and the others are disabled,
 * so what was typed in a kind then left is not sent (without the script, the server reads only the
 * chosen kind's boxes).
 */
function kindChoice() {
  const choice = document.querySelector("[data-kind-choice]");
  if (!choice) return;
  const show = () => {
    const kind = choice.querySelector("input[name=kind]:checked")?.value ?? "https";
    for (const set of document.querySelectorAll("fieldset[data-kind]")) {
      const on = set.dataset.kind === kind;
      set.hidden = !on;
      set.disabled = !on;
    }
  };
  choice.addEventListener("change", show);
  show();
}

localTimes(document);
copyButtons(document);
kindChoice();
liveFeed();
followAttempt();
