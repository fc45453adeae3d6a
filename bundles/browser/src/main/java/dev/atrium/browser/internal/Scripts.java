package dev.atrium.browser.internal;

/**
 * The JavaScript a session evaluates in its page: finding an element by CSS selector or by ARIA role and accessible
 * name (the implicit roles of common HTML elements; the name from {@code aria-labelledby}, {@code aria-label}, the
 * element's labels, {@code alt}, {@code title}, {@code placeholder}, a button's value, else its text), and the
 * extractions. Names match case- and whitespace-insensitively, exactly first, else as a part.
 */
final class Scripts {

    private Scripts() {}

    /** {@code (spec, timeoutMs, visibleOnly) => Promise<Element|null>}; a bad selector rejects with its SyntaxError. */
    static final String LOCATE = """
            (async (spec, timeoutMs, visibleOnly) => {
              const norm = s => (s || '').replace(/\\s+/g, ' ').trim().toLowerCase();
              const implicitRole = el => {
                const tag = el.tagName.toLowerCase();
                const type = (el.getAttribute('type') || '').toLowerCase();
                switch (tag) {
                  case 'a': case 'area': return el.hasAttribute('href') ? 'link' : null;
                  case 'button': return 'button';
                  case 'input':
                    if (['button', 'submit', 'reset', 'image'].includes(type)) return 'button';
                    if (type === 'checkbox') return 'checkbox';
                    if (type === 'radio') return 'radio';
                    if (type === 'range') return 'slider';
                    if (type === 'number') return 'spinbutton';
                    if (type === 'search') return 'searchbox';
                    if (type === 'hidden') return null;
                    return 'textbox';
                  case 'textarea': return 'textbox';
                  case 'select': return el.multiple || el.size > 1 ? 'listbox' : 'combobox';
                  case 'option': return 'option';
                  case 'h1': case 'h2': case 'h3': case 'h4': case 'h5': case 'h6': return 'heading';
                  case 'img': return el.getAttribute('alt') === '' ? 'presentation' : 'img';
                  case 'ul': case 'ol': return 'list';
                  case 'li': return 'listitem';
                  case 'table': return 'table';
                  case 'tr': return 'row';
                  case 'td': return 'cell';
                  case 'th': return 'columnheader';
                  case 'nav': return 'navigation';
                  case 'main': return 'main';
                  case 'form': return 'form';
                  case 'dialog': return 'dialog';
                  case 'article': return 'article';
                  default: return null;
                }
              };
              const roleOf = el => {
                const explicit = (el.getAttribute('role') || '').trim().split(/\\s+/)[0];
                return explicit || implicitRole(el);
              };
              const nameOf = el => {
                const labelledBy = el.getAttribute('aria-labelledby');
                if (labelledBy) {
                  const text = labelledBy.split(/\\s+/).map(id => document.getElementById(id))
                      .filter(Boolean).map(n => n.textContent).join(' ');
                  if (norm(text)) return text;
                }
                const aria = el.getAttribute('aria-label');
                if (norm(aria)) return aria;
                if (el.labels && el.labels.length) return [...el.labels].map(l => l.textContent).join(' ');
                for (const attr of ['alt', 'title']) {
                  if (norm(el.getAttribute(attr))) return el.getAttribute(attr);
                }
                const tag = el.tagName.toLowerCase();
                if (tag === 'input' && ['button', 'submit', 'reset'].includes((el.type || '').toLowerCase())) {
                  return el.value || (el.type === 'submit' ? 'Submit' : '');
                }
                if (['input', 'textarea'].includes(tag)) return el.getAttribute('placeholder') || '';
                return el.innerText || el.textContent || '';
              };
              const visible = el => {
                const r = el.getBoundingClientRect();
                const style = getComputedStyle(el);
                return r.width > 0 && r.height > 0 && style.visibility !== 'hidden' && style.display !== 'none';
              };
              const find = () => {
                if (spec.selector) {
                  const el = document.querySelector(spec.selector);
                  return el && (!visibleOnly || visible(el)) ? el : null;
                }
                const all = [...document.querySelectorAll('*')].filter(el => roleOf(el) === spec.role && visible(el));
                if (spec.name == null) return all[0] || null;
                const want = norm(spec.name);
                return all.find(el => norm(nameOf(el)) === want) || all.find(el => norm(nameOf(el)).includes(want)) || null;
              };
              const deadline = Date.now() + timeoutMs;
              for (;;) {
                const el = find();
                if (el) return el;
                if (Date.now() >= deadline) return null;
                await new Promise(resolve => setTimeout(resolve, 50));
              }
            })""";

    /** On the element: scrolls it into view and answers its centre in viewport coordinates. */
    static final String CENTRE = """
            function () {
              this.scrollIntoView({block: 'center', inline: 'center'});
              const r = this.getBoundingClientRect();
              return {x: r.left + r.width / 2, y: r.top + r.height / 2};
            }""";

    /** On the element: focuses it and selects what it holds, so that typed text replaces it. */
    static final String FOCUS_AND_SELECT = """
            function () {
              this.scrollIntoView({block: 'center'});
              this.focus();
              if (typeof this.select === 'function') {
                this.select();
              } else if (this.isContentEditable) {
                const range = document.createRange();
                range.selectNodeContents(this);
                const selection = window.getSelection();
                selection.removeAllRanges();
                selection.addRange(range);
              }
            }""";

    /** On the element: empties an input or textarea as a user's delete would (input and change events). */
    static final String CLEAR = """
            function () {
              if ('value' in this) {
                this.value = '';
                this.dispatchEvent(new Event('input', {bubbles: true}));
                this.dispatchEvent(new Event('change', {bubbles: true}));
              } else if (this.isContentEditable) {
                this.textContent = '';
              }
            }""";

    static final String FOCUS = "function () { this.focus(); }";

    /** On a select element: picks the option with that value, else that label; answers why not, or null. */
    static final String SELECT = """
            function (value) {
              if (this.tagName !== 'SELECT') return 'the element is not a select element';
              const options = [...this.options];
              const option = options.find(o => o.value === value) || options.find(o => o.label.trim() === value.trim());
              if (!option) return 'the select element has no option ' + JSON.stringify(value);
              this.value = option.value;
              option.selected = true;
              this.dispatchEvent(new Event('input', {bubbles: true}));
              this.dispatchEvent(new Event('change', {bubbles: true}));
              return null;
            }""";

    static final String SCROLL_INTO_VIEW =
            "function () { this.scrollIntoView({block: 'center'}); return {x: window.scrollX, y: window.scrollY}; }";

    /** {@code (pixels)}: scrolls the window down by that many pixels (up when negative), default one viewport. */
    static final String SCROLL_WINDOW = """
            (pixels => {
              window.scrollBy(0, pixels == null ? window.innerHeight : pixels);
              return {x: window.scrollX, y: window.scrollY};
            })""";

    /** On the root element: its visible text. */
    /**
     * On the root element: its text, or null when it is longer than {@link BrowserSession#MAX_TEXT_CHARS} (only its
     * length crosses the DevTools connection then).
     */
    static final String TEXT = "function () { const t = this.innerText || this.textContent || '';"
            + " return t.length > " + BrowserSession.MAX_TEXT_CHARS + " ? null : t; }";

    /** On the root element: its links, text and absolute href, at most 2000. */
    static final String LINKS = """
            function () {
              return [...this.querySelectorAll('a[href], area[href]')].slice(0, 2000)
                  .map(a => ({text: (a.innerText || a.getAttribute('aria-label') || '').replace(/\\s+/g, ' ').trim(),
                              href: a.href}));
            }""";

    /** On the root element: the table it is or holds first, as header cells and rows of cell text. */
    static final String TABLE = """
            function () {
              const table = this.tagName === 'TABLE' ? this : this.querySelector('table');
              if (!table) return null;
              const text = cell => (cell.innerText || cell.textContent || '').replace(/\\s+/g, ' ').trim();
              const rows = [...table.rows];
              let headers = [];
              if (rows.length && [...rows[0].cells].every(c => c.tagName === 'TH')) {
                headers = [...rows.shift().cells].map(text);
              }
              return {headers, rows: rows.slice(0, 5000).map(r => [...r.cells].map(text))};
            }""";
}
