// A settings tab as a list of sections with a table of contents (issue 46 point 11: the tabs ran to 6,000 px).
// On a wide screen the contents stay beside the sections as the page scrolls; narrower, they are a horizontal strip
// above them. Each section sits in an element with the id `setting-<id>`, the target of its link.
// Props:
//   sections: { id, title, node }[] – the sections in order: id for the anchor, title for the contents, node to show
import type { ReactNode } from 'react';
import { Anchor, Col, Grid, Row } from 'antd';

export interface SettingSection {
  id: string;
  title: string;
  node: ReactNode;
}

/** The console's sticky header (components/HeaderBar.tsx) plus a margin: a section scrolled to starts below it. */
const HEADER_OFFSET = 80;

export default function SectionLayout({ sections }: { sections: SettingSection[] }) {
  const wide = Grid.useBreakpoint().lg === true;
  const items = sections.map((s) => ({ key: s.id, href: `#setting-${s.id}`, title: s.title }));
  const body = sections.map((s) => (
    <div key={s.id} id={`setting-${s.id}`} style={{ scrollMarginTop: HEADER_OFFSET }}>
      {s.node}
    </div>
  ));
  // a tab of one or two sections needs no contents
  if (sections.length < 3) return <>{body}</>;
  const anchor = (horizontal: boolean) => (
    <Anchor
      direction={horizontal ? 'horizontal' : 'vertical'}
      items={items}
      offsetTop={horizontal ? 64 : HEADER_OFFSET}
      targetOffset={horizontal ? HEADER_OFFSET + 48 : HEADER_OFFSET}
      // the tab is in the query string (?tab=…): following a link must not replace it with a hash entry
      replace
      style={horizontal ? { marginBottom: 12 } : undefined}
    />
  );
  if (!wide) {
    return (
      <>
        <div data-testid="setting-contents">{anchor(true)}</div>
        {body}
      </>
    );
  }
  return (
    <Row gutter={16} wrap={false}>
      <Col flex="auto" style={{ minWidth: 0 }}>
        {body}
      </Col>
      <Col flex="180px" data-testid="setting-contents">
        {anchor(false)}
      </Col>
    </Row>
  );
}
