// Pager for new-api's list endpoints that page from 0 and return a bare array without a total (channels, tokens):
// a further page is offered whenever the current one came back full. A page-size change is remembered
// (localStorage `page-size`) and goes back to the first page.
// Props: page (0-based), pageSize, shown (rows on this page), hasMore (this page was full), onPage(page0),
// onPageSize(size).
import { Pagination } from 'antd';
import { PAGE_SIZE_OPTIONS, setPageSize as storePageSize } from '../lib/storage.js';

export interface ZeroBasedPagerProps {
  page: number;
  pageSize: number;
  shown: number;
  hasMore: boolean;
  onPage: (page: number) => void;
  onPageSize: (size: number) => void;
}

export function ZeroBasedPager({ page, pageSize, shown, hasMore, onPage, onPageSize }: ZeroBasedPagerProps) {
  return (
    <Pagination
      style={{ marginTop: 12, textAlign: 'right' }}
      current={page + 1}
      pageSize={pageSize}
      total={page * pageSize + shown + (hasMore ? 1 : 0)}
      showSizeChanger
      pageSizeOptions={PAGE_SIZE_OPTIONS}
      onChange={(p, size) => {
        if (size !== pageSize) {
          onPageSize(size);
          storePageSize(size);
          onPage(0);
        } else onPage(p - 1);
      }}
    />
  );
}
