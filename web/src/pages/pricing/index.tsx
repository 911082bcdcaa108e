// Public pricing page (/pricing, spec §2 Pricing page, §9 Pricing formulas): group banners, the pay-as-you-go
// formula, fuzzy model search (composition-safe), copy of the selected models and the price table for the viewed
// group. Clicking a usable group switches the viewed group.
import { useEffect, useMemo, useRef, useState, type ChangeEvent, type CompositionEvent } from 'react';
import { Alert, Button, Card, Flex, Input, Popover, Space, Table, Tag, Tooltip, Typography, theme } from 'antd';
import type { ColumnsType } from 'antd/es/table';
import { CheckCircleFilled, CopyOutlined, QuestionCircleOutlined, SearchOutlined } from '@ant-design/icons';
import { useQuery } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { api } from '../../lib/api.js';
import { message, modal } from '../../lib/feedback.js';
import { displayInCurrency, quotaPerUnit, renderRatioColor } from '../../lib/render.js';
import { copyText, getPageSize, PAGE_SIZE_OPTIONS, setPageSize } from '../../lib/storage.js';
import { useStatus } from '../../context/status.js';
import { useUser } from '../../context/user.js';
import PageHeader from '../../components/PageHeader.js';
import {
  callPrice,
  completionPrice,
  displayCompletionRatio,
  filterPricing,
  formatAmount,
  groupRatioOf,
  initialGroup,
  isAvailable,
  isPerCall,
  isPerSecond,
  promptPrice,
  selectedModelsText,
  sortPricing,
  trimNumber,
  usableGroupsOf,
  DEFAULT_GROUP,
  type PricingResponse,
  type PricingRow,
} from './logic.js';
import { NS } from './i18n.js';

interface PricingData {
  rows: PricingRow[];
  groupRatio: Record<string, number>;
  usableGroup: Record<string, string>;
}

export default function Pricing() {
  const { t } = useTranslation(NS);
  const { status } = useStatus();
  const { user } = useUser();
  const { token } = theme.useToken();
  const [group, setGroup] = useState(() => initialGroup(user));
  const [searchInput, setSearchInput] = useState('');
  const [query, setQuery] = useState('');
  const composing = useRef(false);
  const [selected, setSelected] = useState<string[]>([]);
  const [pageSize, setSize] = useState(() => getPageSize(10));

  // A login or logout elsewhere changes whose prices are shown.
  useEffect(() => setGroup(initialGroup(user)), [user]);

  const pricing = useQuery({
    queryKey: ['pricing', user?.id ?? 0],
    queryFn: async (): Promise<PricingData> => {
      const res = (await api.get<PricingRow[]>('/api/pricing')) as PricingResponse;
      if (!res.success) {
        void message.error(res.message);
        return { rows: [], groupRatio: {}, usableGroup: {} };
      }
      return {
        rows: sortPricing(Array.isArray(res.data) ? res.data : []),
        groupRatio: res.group_ratio ?? {},
        usableGroup: res.usable_group ?? {},
      };
    },
  });

  const data = pricing.data;
  const ratio = groupRatioOf(data?.groupRatio, group);
  const display = {
    inCurrency: typeof status.display_in_currency === 'boolean' ? status.display_in_currency : displayInCurrency(),
    quotaPerUnit:
      typeof status.quota_per_unit === 'number' && status.quota_per_unit > 0 ? status.quota_per_unit : quotaPerUnit(),
  };
  const amount = (dollars: number) => {
    const a = formatAmount(dollars, display);
    return a.unit === 'currency' ? a.text : t('quotaAmount', { amount: a.text });
  };

  const rows = useMemo(() => filterPricing(data?.rows ?? [], query), [data, query]);

  const copy = async (text: string) => {
    if (await copyText(text)) void message.success(t('common:copy.success', { text }));
    else modal.error({ title: t('common:copy.failed'), content: text });
  };

  const switchGroup = (g: string) => {
    setGroup(g);
    void message.info(t('currentGroup', { group: g, ratio: groupRatioOf(data?.groupRatio, g) }));
  };

  // IME input (pinyin etc.) reaches onChange before the word is chosen: filter only on committed text.
  const onSearchChange = (e: ChangeEvent<HTMLInputElement>) => {
    setSearchInput(e.target.value);
    if (!composing.current) setQuery(e.target.value);
  };
  const onCompositionStart = () => {
    composing.current = true;
  };
  const onCompositionEnd = (e: CompositionEvent<HTMLInputElement>) => {
    composing.current = false;
    setQuery(e.currentTarget.value);
  };

  const ratioHelp = (
    <div style={{ maxWidth: 360 }} data-testid="ratio-help">
      <Typography.Paragraph style={{ marginBottom: 4 }}>{t('ratioHelp1')}</Typography.Paragraph>
      <Typography.Paragraph style={{ marginBottom: 4 }}>{t('ratioHelp2')}</Typography.Paragraph>
      <Typography.Paragraph style={{ marginBottom: 4 }}>{t('ratioHelp3')}</Typography.Paragraph>
      <Typography.Paragraph style={{ marginBottom: 0 }}>{t('ratioHelp4')}</Typography.Paragraph>
    </div>
  );

  const columns: ColumnsType<PricingRow> = [
    {
      title: t('available'),
      key: 'available',
      width: 90,
      align: 'center',
      render: (_, r) =>
        isAvailable(r, group) ? (
          <Tooltip title={t('availableTip')}>
            <CheckCircleFilled
              style={{ color: token.colorSuccess, fontSize: 18 }}
              data-testid={`available-${r.model_name}`}
            />
          </Tooltip>
        ) : null,
      sorter: (a, b) => Number(isAvailable(a, group)) - Number(isAvailable(b, group)),
    },
    {
      title: t('modelName'),
      dataIndex: 'model_name',
      render: (name: string) => (
        <Tag
          color="green"
          style={{ cursor: 'pointer', fontSize: 13, paddingBlock: 2 }}
          onClick={() => void copy(name)}
          data-testid={`model-${name}`}
        >
          {name}
        </Tag>
      ),
      sorter: (a, b) => a.model_name.localeCompare(b.model_name),
    },
    {
      title: t('billingType'),
      key: 'quota_type',
      render: (_, r) => (
        <span data-testid={`billing-${r.model_name}`}>
          {isPerSecond(r) ? (
            <Tag color="purple">{t('perSecond')}</Tag>
          ) : isPerCall(r) ? (
            <Tag color="orange">{t('perCall')}</Tag>
          ) : (
            <Tag color="cyan">{t('perToken')}</Tag>
          )}
        </span>
      ),
      sorter: (a, b) => a.quota_type - b.quota_type,
    },
    {
      title: t('usableGroups'),
      key: 'groups',
      render: (_, r) => (
        <Space size={4} wrap>
          {usableGroupsOf(r, data?.usableGroup).map((g) =>
            g === group ? (
              <Tag key={g} color="blue" icon={<CheckCircleFilled />} data-testid={`group-${r.model_name}-${g}`}>
                {g}
              </Tag>
            ) : (
              <Tooltip key={g} title={data?.usableGroup[g]}>
                <Tag
                  color="blue"
                  variant="outlined"
                  style={{ cursor: 'pointer' }}
                  onClick={() => switchGroup(g)}
                  data-testid={`group-${r.model_name}-${g}`}
                >
                  {g}
                </Tag>
              </Tooltip>
            ),
          )}
        </Space>
      ),
    },
    {
      title: (
        <Space size={4}>
          <span>{t('ratio')}</span>
          <Popover title={t('ratioHelpTitle')} content={ratioHelp} trigger={['hover', 'click']}>
            <QuestionCircleOutlined
              style={{ cursor: 'help' }}
              aria-label={t('ratioHelpTitle')}
              data-testid="ratio-help-icon"
            />
          </Popover>
        </Space>
      ),
      key: 'ratio',
      render: (_, r) => (
        <div data-testid={`ratio-${r.model_name}`}>
          <div>
            {t('labelled', {
              label: t('modelRatio'),
              value: isPerCall(r) ? t('none') : trimNumber(r.model_ratio),
            })}
          </div>
          <div>
            {t('labelled', {
              label: t('completionRatio'),
              value: isPerCall(r) ? t('none') : displayCompletionRatio(r.completion_ratio),
            })}
          </div>
          <div>{t('labelled', { label: t('groupRatio'), value: trimNumber(ratio) })}</div>
        </div>
      ),
    },
    {
      title: t('price'),
      key: 'price',
      render: (_, r) =>
        isPerCall(r) ? (
          <div data-testid={`price-${r.model_name}`}>
            {t(isPerSecond(r) ? 'secondPrice' : 'callPrice', { amount: amount(callPrice(r, ratio)) })}
          </div>
        ) : (
          <div data-testid={`price-${r.model_name}`}>
            <div>
              {t('prompt')} {t('perMillion', { amount: amount(promptPrice(r, ratio)) })}
            </div>
            <div>
              {t('completion')} {t('perMillion', { amount: amount(completionPrice(r, ratio)) })}
            </div>
          </div>
        ),
    },
  ];

  const userGroup = user?.group || DEFAULT_GROUP;
  return (
    <Card data-testid="pricing-page">
      <PageHeader title={t('title')} />
      <Flex vertical gap={8} style={{ marginBottom: 16 }}>
        {user ? (
          <Alert
            type="success"
            showIcon
            data-testid="pricing-user-banner"
            title={t('userBanner', { group: userGroup, ratio: groupRatioOf(data?.groupRatio, userGroup) })}
          />
        ) : (
          <Alert
            type="warning"
            showIcon
            data-testid="pricing-guest-banner"
            title={t('guestBanner', { ratio: groupRatioOf(data?.groupRatio, DEFAULT_GROUP) })}
          />
        )}
        <Alert type="info" showIcon title={t('formula')} data-testid="pricing-formula" />
      </Flex>
      <Flex gap={8} wrap align="center" style={{ marginBottom: 16 }}>
        <Input
          allowClear
          prefix={<SearchOutlined />}
          placeholder={t('searchPh')}
          value={searchInput}
          onChange={onSearchChange}
          onCompositionStart={onCompositionStart}
          onCompositionEnd={onCompositionEnd}
          style={{ flex: '1 1 280px', maxWidth: 420 }}
          data-testid="pricing-search"
        />
        <Button
          type="primary"
          icon={<CopyOutlined />}
          disabled={selected.length === 0}
          onClick={() => void copy(selectedModelsText(selected))}
          data-testid="pricing-copy-selected"
        >
          {t('copySelected')}
        </Button>
        <Tag color={renderRatioColor(ratio)} data-testid="pricing-current-group">
          {t('groupRatio')} · {group}: {trimNumber(ratio)}
        </Tag>
      </Flex>
      <Table<PricingRow>
        rowKey="model_name"
        size="middle"
        columns={columns}
        dataSource={rows}
        loading={pricing.isLoading}
        scroll={{ x: 'max-content' }}
        rowSelection={{ selectedRowKeys: selected, onChange: (keys) => setSelected(keys.map(String)) }}
        pagination={{
          pageSize,
          showSizeChanger: true,
          pageSizeOptions: PAGE_SIZE_OPTIONS,
          showTotal: (total) => <Typography.Text type="secondary">{t('total', { count: total })}</Typography.Text>,
          onShowSizeChange: (_, size) => {
            setPageSize(size);
            setSize(size);
          },
        }}
      />
    </Card>
  );
}
