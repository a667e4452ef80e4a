// The in-page half of the fast snapshot (see walker.rs). Runs in an isolated world, so
// the page can neither see `globalThis.__toolhostRefs` nor patch the DOM APIs used here.
// Roles and names come from Chromium's own accessibility engine (`computedRole`,
// `computedName`); this only walks the flat tree the way the accessibility tree does.
// Returns null when the page holds something only the full accessibility tree renders
// faithfully (the caller then takes that slower path), else
// the JSON text of `[[depth, role, name, value, [flags], refIndex], ...]` (refIndex -1:
// no ref).
(full) => {
  if (!('computedRole' in Element.prototype)) return null;
  const INTERACTIVE = new Set(['button', 'link', 'textbox', 'searchbox', 'checkbox', 'radio',
    'combobox', 'listbox', 'option', 'menuitem', 'menuitemcheckbox', 'menuitemradio', 'tab',
    'slider', 'spinbutton', 'switch', 'treeitem', 'heading']);
  const STRUCTURAL = new Set(['none', 'generic', 'presentation', '']);
  // Chromium roles without an ARIA name, shown (in full mode) when named.
  const INTERNAL = { summary: 'DisclosureTriangle', iframe: 'Iframe', label: 'LabelText',
    abbr: 'Abbr', dl: 'DescriptionList', legend: 'Legend', figcaption: 'Figcaption',
    canvas: 'Canvas' };
  // Widgets whose accessibility subtree lives in a shadow root script cannot see.
  const OPAQUE_INPUTS = new Set(['date', 'time', 'datetime-local', 'month', 'week', 'color', 'file']);
  const MARKERS = { disc: '•', circle: '◦', square: '■' };
  const NO_CHILDREN = new Set(['iframe', 'img', 'object', 'embed', 'textarea', 'select', 'input',
    'meter', 'progress']);
  const GIVE_UP = {};
  // Without a live accessibility context each computedRole rebuilds one: bail out.
  const deadline = performance.now() + 2000;
  const out = [];
  const els = [];
  if (document.querySelector('[aria-owns], audio[controls], video[controls], canvas *')) return null;

  const kids = (n) => {
    if (n.shadowRoot) return n.shadowRoot.childNodes;
    if (n.localName === 'slot') {
      const assigned = n.assignedNodes();
      return assigned.length ? assigned : n.childNodes;
    }
    return n.childNodes;
  };
  const on = (el, attr) => el.getAttribute(attr) === 'true';
  const flagsOf = (el, role) => {
    const flags = [];
    if (el.matches(':disabled') || el.closest('[aria-disabled="true"]')) flags.push('disabled');
    if (role === 'heading' || role === 'treeitem') {
      const aria = parseInt(el.getAttribute('aria-level'), 10);
      const tag = /^h([1-6])$/.exec(el.localName);
      const level = aria > 0 ? aria : tag ? Number(tag[1]) : role === 'heading' ? 2 : 1;
      flags.push('level=' + level);
    } else if (el.hasAttribute('aria-level')) {
      const aria = parseInt(el.getAttribute('aria-level'), 10);
      if (aria > 0) flags.push('level=' + aria);
    }
    if (el.required || on(el, 'aria-required')) flags.push('required');
    const native = el.localName === 'input' && (el.type === 'checkbox' || el.type === 'radio');
    if (native ? el.checked && !el.indeterminate : on(el, 'aria-checked')) flags.push('checked');
    const openSummary = el.localName === 'summary' && el.parentElement?.localName === 'details'
      && el.parentElement.open;
    if (on(el, 'aria-expanded') || openSummary) flags.push('expanded');
    if (el.localName === 'option' ? el.selected : on(el, 'aria-selected')) flags.push('selected');
    return flags;
  };
  const valueOf = (el, role) => {
    if (el.localName === 'textarea') return el.value;
    if (el.localName === 'select') {
      return el.multiple || el.size > 1 ? '' : (el.selectedOptions[0]?.label ?? '');
    }
    if (el.localName === 'input' && (role === 'textbox' || role === 'searchbox' || role === 'combobox')) {
      return el.type === 'password' ? '•'.repeat([...el.value].length) : el.value;
    }
    return '';
  };
  const transform = (text, style) => {
    switch (style.textTransform) {
      case 'uppercase': return text.toUpperCase();
      case 'lowercase': return text.toLowerCase();
      case 'capitalize': return text.replace(/(^|\s)(\S)/g, (m, s, c) => s + c.toUpperCase());
      default: return text;
    }
  };
  const text = (node, depth) => {
    const parent = node.parentElement
      ?? (node.parentNode instanceof ShadowRoot ? node.parentNode.host : null);
    if (!parent || !parent.checkVisibility({ visibilityProperty: true })) return;
    const style = getComputedStyle(parent);
    let data = node.data;
    if (style.whiteSpaceCollapse === 'collapse') data = data.replace(/[ \t\n\r\f]+/g, ' ');
    else if (style.whiteSpaceCollapse === 'preserve-breaks') {
      data = data.replace(/[ \t\r\f]*\n[ \t\r\f]*/g, '\n').replace(/[ \t\r\f]+/g, ' ');
    }
    if (data.trim() === '') return;
    out.push([depth, 'StaticText', transform(data, style), '', [], -1]);
  };
  const ordinals = new Map();
  const marker = (li, depth) => {
    const style = getComputedStyle(li);
    if (style.display !== 'list-item' || style.listStyleType === 'none') return;
    if (style.listStyleImage !== 'none') throw GIVE_UP;
    let name = MARKERS[style.listStyleType];
    if (name === undefined) {
      if (style.listStyleType !== 'decimal') throw GIVE_UP;
      const list = li.parentElement;
      const reversed = list?.localName === 'ol' && list.reversed;
      const items = list ? [...list.children].filter((c) => c.localName === 'li') : [li];
      let n = ordinals.get(li);
      if (n === undefined) {
        let next = list?.localName === 'ol' && list.hasAttribute('start') ? list.start
          : reversed ? items.length : 1;
        for (const item of items) {
          if (item.hasAttribute('value')) next = item.value;
          ordinals.set(item, next);
          next += reversed ? -1 : 1;
        }
        n = ordinals.get(li) ?? 1;
      }
      name = n + '.';
    }
    out.push([depth, 'ListMarker', name, '', [], -1]);
  };
  const visit = (node, depth, inSelect = false) => {
    if (node.nodeType === Node.TEXT_NODE) {
      if (full) text(node, depth);
      return;
    }
    if (node.nodeType !== Node.ELEMENT_NODE) {
      for (const child of kids(node)) visit(child, depth);
      return;
    }
    const el = node;
    if (performance.now() > deadline) throw GIVE_UP;
    if (el.getAttribute('aria-hidden') === 'true' || el.inert) return;
    // Options are not rendered until their select opens, yet they are in the tree.
    // Visible (the common case, one call), else rendered but invisible (children may
    // show), else display: contents (a box-less container), else gone with its subtree.
    const seen = inSelect || el.checkVisibility({ visibilityProperty: true });
    let contents = false;
    if (!seen && !el.checkVisibility()) {
      if (getComputedStyle(el).display !== 'contents') return;
      contents = true;
    }
    const tag = el.localName;
    if (tag === 'input' && OPAQUE_INPUTS.has(el.type)) throw GIVE_UP;
    // A defined custom element without an open shadow root may hide a closed one.
    if (tag.includes('-') && !el.shadowRoot && el.matches(':defined')) throw GIVE_UP;
    const visible = seen || (contents && getComputedStyle(el).visibility === 'visible');
    let role = visible ? el.computedRole || '' : '';
    const interactive = INTERACTIVE.has(role);
    let shown = false;
    if (visible && (full || interactive)) {
      // Structural roles never print, so their (costly) names are not asked for.
      const named = interactive || role === '' || !STRUCTURAL.has(role);
      const name = named ? el.computedName || '' : '';
      if (role === '' && name.trim() !== '') {
        role = INTERNAL[tag];
        if (role === undefined) throw GIVE_UP;
      }
      shown = interactive || (full && !STRUCTURAL.has(role) && name.trim() !== '');
      if (shown) {
        let ref = -1;
        if (interactive) {
          ref = els.length;
          els.push(el);
        }
        out.push([depth, role, name, valueOf(el, role), flagsOf(el, role), ref]);
      }
    }
    if (interactive && role !== 'listbox' && role !== 'combobox') return;
    if (NO_CHILDREN.has(tag) && role !== 'listbox' && role !== 'combobox') return;
    const childDepth = shown && full ? depth + 1 : depth;
    if (full && visible && tag === 'li') marker(el, childDepth);
    // A closed details shows only its summary.
    const children = tag === 'details' && !el.open
      ? [...el.children].filter((c) => c.localName === 'summary').slice(0, 1) : kids(el);
    // The quotation marks of q are generated text, which the tree has.
    const quoted = full && visible && tag === 'q';
    const nested = quoted && el.parentElement?.closest('q') !== null;
    if (quoted) out.push([childDepth, 'StaticText', nested ? '‘' : '“', '', [], -1]);
    for (const child of children) visit(child, childDepth, inSelect || tag === 'select');
    if (quoted) out.push([childDepth, 'StaticText', nested ? '’' : '”', '', [], -1]);
  };
  try {
    visit(document.documentElement, 0);
  } catch (e) {
    if (e === GIVE_UP) return null;
    throw e;
  }
  globalThis.__toolhostRefs = els;
  // One string: the protocol converts a nested array value by value, several times slower.
  return JSON.stringify(out);
}
