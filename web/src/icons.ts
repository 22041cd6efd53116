// Line icons drawn as inline SVG: no icon font, no emoji font needed.

const paths = {
  menu: 'M4 6h16M4 12h16M4 18h16',
  plus: 'M12 5v14M5 12h14',
  pencil: 'M4 20h4L19 9l-4-4L4 16zM14 6l4 4',
  trash: 'M4 7h16M9 7V4h6v3M6 7l1 13h10l1-13M10 11v6M14 11v6',
  pin: 'M9 4h6M10 4v6l-3 4h10l-3-4V4M12 14v6',
  unpin: 'M9 4h6M10 4v6l-3 4h10l-3-4V4M12 14v6M4 4l16 16',
  key: 'M3 15a4 4 0 1 0 8 0a4 4 0 1 0-8 0M10 12l9-9M16 6l3 3M13.5 8.5l2 2',
  gear: 'M9 12a3 3 0 1 0 6 0a3 3 0 1 0-6 0M12 2v3M12 19v3M2 12h3M19 12h3M4.9 4.9 7 7M17 17l2.1 2.1M4.9 19.1 7 17M17 7l2.1-2.1',
  info: 'M3 12a9 9 0 1 0 18 0a9 9 0 1 0-18 0M12 11v6M12 7v.5',
  close: 'M6 6l12 12M18 6 6 18',
} as const;

export type IconName = keyof typeof paths;

const NS = 'http://www.w3.org/2000/svg';

/** icon returns an SVG icon (decorative: label its button). */
export function icon(name: IconName): SVGSVGElement {
  const svg = document.createElementNS(NS, 'svg');
  svg.setAttribute('viewBox', '0 0 24 24');
  svg.setAttribute('class', 'icon');
  svg.setAttribute('aria-hidden', 'true');
  const p = document.createElementNS(NS, 'path');
  p.setAttribute('d', paths[name]);
  svg.append(p);
  return svg;
}

/** applyIcons puts its icon into every element with data-icon. */
export function applyIcons(root: ParentNode): void {
  for (const el of root.querySelectorAll<HTMLElement>('[data-icon]')) {
    const name = el.dataset.icon as IconName;
    if (name in paths) el.prepend(icon(name));
  }
}
