// Wallet page (/topup; spec §2 Wallet, §5 Wallet; new-api-compat.md §9.1, §9.2): balance, subscription plans
// (PlansSection), redeem a code, online top-up via EPay, Stripe (StripeSection) and Creem (CreemSection), the top-up
// history (TopUpHistory).
import { useEffect, useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { Alert, App as AntApp, Button, Card, Divider, Input, InputNumber, Space, Statistic, Typography } from 'antd';
import { quiet } from '../../components/quiet.js';
import { useStatus } from '../../context/status.js';
import { SELF_KEY, selfQuery } from '../../lib/self.js';
import { api } from '../../lib/api.js';
import { displayInCurrency, renderQuota } from '../../lib/render.js';
import './i18n.js';
import { CheckinSection } from './CheckinSection.js';
import { PlansSection } from './PlansSection.js';
import { StripeSection } from './StripeSection.js';
import { CreemSection } from './CreemSection.js';
import { TopUpHistory } from './TopUpHistory.js';
import {
  buildPayForm,
  checkAmount,
  effectiveMinTopup,
  isSafari,
  normalizeAmount,
  paySucceeded,
  type PayAnswer,
  type PaymentMethod,
} from './logic.js';

/** The server's price of a top-up amount, as a query (one cache entry per amount). */
function priceOptions(value: number | null) {
  return {
    queryKey: ['topup', 'amount', value] as const,
    queryFn: async (): Promise<string> => {
      const res = (await api.post<string>('/api/user/amount', {
        amount: value,
        top_up_code: '',
      })) as unknown as PayAnswer<string>;
      if (!paySucceeded(res)) throw new Error(String(res.data));
      return res.data;
    },
  };
}

export default function TopUpPage() {
  const { t } = useTranslation('topup');
  const { message, modal } = AntApp.useApp();
  const { status } = useStatus();
  const minTopup = effectiveMinTopup(status);
  const [code, setCode] = useState('');
  const [amount, setAmount] = useState<number>(() => normalizeAmount(minTopup));
  // the amount the price is asked for: the input's value once it has rested 300 ms
  const [quoted, setQuoted] = useState<number | null>(null);
  const qc = useQueryClient();

  // the same query (and key) as the dashboard and the personal page: a redeemed code updates all three
  const self = useQuery(selfQuery);
  const quota = self.data?.quota ?? null;
  useEffect(() => {
    if (self.error) message.error(self.error.message);
  }, [self.error, message]);

  // The minimum arrives with /api/status; start the input there once known.
  useEffect(() => {
    setAmount((a) => (a < minTopup ? minTopup : a));
  }, [minTopup]);

  useEffect(() => {
    if (!status.enable_online_topup || amount < minTopup) {
      setQuoted(null);
      return;
    }
    const timer = setTimeout(() => setQuoted(amount), 300);
    return () => clearTimeout(timer);
  }, [amount, minTopup, status.enable_online_topup]);

  /** The server's price of the quoted amount (shown under the input and in the confirmation). */
  const priceQuery = useQuery({ ...priceOptions(quoted), enabled: quoted !== null && !!status.enable_online_topup });
  useEffect(() => {
    if (priceQuery.error) message.error(priceQuery.error.message);
  }, [priceQuery.error, message]);
  const price = quoted !== null && quoted === amount ? (priceQuery.data ?? null) : null;
  /** The price of `value`: the one shown when it is the quoted amount, else asked now. */
  const quote = async (value: number): Promise<string | null> => {
    if (!status.enable_online_topup) return null;
    if (value === quoted && priceQuery.data) return priceQuery.data;
    setQuoted(value);
    try {
      return await qc.fetchQuery(priceOptions(value));
    } catch {
      return null;
    }
  };

  const redeemCode = useMutation({
    mutationFn: (key: string) => api.post<number>('/api/user/topup', { key }),
    onSuccess: (res) => {
      if (!res.success) return void message.error(res.message);
      message.success(t('redeem.success'));
      modal.success({
        title: t('redeem.success'),
        content: t('redeem.credited', { quota: renderQuota(res.data) }),
        centered: true,
      });
      setCode('');
      return qc.invalidateQueries({ queryKey: SELF_KEY });
    },
    onError: () => void message.error(t('err.request')),
  });
  const redeeming = redeemCode.isPending;
  const payRequest = useMutation({
    mutationFn: (p: { method: PaymentMethod; value: number }) =>
      api.post('/api/user/pay', { amount: p.value, top_up_code: '', payment_method: p.method }),
  });
  const paying = payRequest.isPending;

  const redeem = async () => {
    const key = code.trim();
    if (!key) {
      message.info(t('err.code'));
      return;
    }
    await redeemCode.mutateAsync(key).catch(() => undefined);
  };

  const openTopUpLink = () => {
    if (!status.top_up_link) {
      message.error(t('err.link'));
      return;
    }
    window.open(status.top_up_link, '_blank');
  };

  const pay = async (method: PaymentMethod, value: number) => {
    try {
      const res = (await payRequest.mutateAsync({ method, value })) as unknown as PayAnswer<Record<string, unknown>>;
      if (!paySucceeded(res) || !res.url) {
        message.error(String(res.data ?? res.message));
        return;
      }
      message.info(t('msg.redirecting'));
      const form = buildPayForm(document, res.url, res.data, !isSafari(navigator.userAgent));
      document.body.appendChild(form);
      form.submit();
      form.remove();
    } catch {
      /* toasted */
    }
  };

  const startPay = async (method: PaymentMethod) => {
    if (!status.enable_online_topup) {
      message.error(t('err.online'));
      return;
    }
    const check = checkAmount(amount, minTopup);
    if (!check.ok) {
      message.error(t('err.min', { min: check.min }));
      return;
    }
    const money = await quote(check.amount);
    if (money === null) return;
    modal.confirm({
      title: t('confirm.title'),
      content: (
        <>
          <Typography.Paragraph>{t('confirm.amount', { amount: check.amount })}</Typography.Paragraph>
          <Typography.Paragraph>{t('confirm.price', { price: money })}</Typography.Paragraph>
        </>
      ),
      okText: t('confirm.ok'),
      cancelText: t('confirm.cancel'),
      centered: true,
      onOk: () => pay(method, check.amount),
    });
  };

  const inCurrency = displayInCurrency();
  // Buttons that can only fail are disabled, and the reason is shown beside them (issue 34).
  const onlineTopup = !!status.enable_online_topup;
  return (
    <Card title={t('title')} data-testid="topup-page" style={{ maxWidth: 640 }}>
      <Statistic title={t('balance')} value={quota === null ? '-' : renderQuota(quota)} data-testid="wallet-balance" />
      <CheckinSection />
      <PlansSection />
      <Divider />
      <Typography.Title level={5}>{t('redeem.title')}</Typography.Title>
      <Space.Compact style={{ width: '100%' }}>
        <Input
          value={code}
          onChange={(e) => setCode(e.target.value)}
          onPressEnter={() => quiet(redeem())}
          placeholder={t('redeem.placeholder')}
          allowClear
          name="redemption-code"
          data-testid="redeem-code"
        />
        <Button type="primary" loading={redeeming} onClick={() => quiet(redeem())} data-testid="redeem-submit">
          {redeeming ? t('redeem.submitting') : t('redeem.submit')}
        </Button>
      </Space.Compact>
      <Space size={4} wrap>
        <Button
          type="link"
          onClick={openTopUpLink}
          disabled={!status.top_up_link}
          style={{ paddingLeft: 0 }}
          data-testid="topup-link"
        >
          {t('redeem.getCode')}
        </Button>
        {!status.top_up_link && (
          <Typography.Text type="secondary" data-testid="topup-link-reason">
            {t('redeem.noLink')}
          </Typography.Text>
        )}
      </Space>
      <Divider />
      <Typography.Title level={5}>{t('online.title')}</Typography.Title>
      {!onlineTopup && (
        <Alert
          type="info"
          showIcon
          title={t('online.disabledNote')}
          style={{ marginBottom: 12 }}
          data-testid="online-topup-reason"
        />
      )}
      <Space orientation="vertical" style={{ width: '100%' }}>
        <Space wrap align="center">
          <span>{t('online.amount')}</span>
          <InputNumber
            value={amount}
            min={1}
            precision={0}
            onChange={(v) => setAmount(normalizeAmount(v))}
            disabled={!onlineTopup}
            style={{ width: 200 }}
            data-testid="topup-amount"
          />
          <Typography.Text type="secondary">
            {inCurrency
              ? t('online.amountHintCurrency', { min: minTopup })
              : t('online.amountHintQuota', { min: minTopup })}
          </Typography.Text>
        </Space>
        {price !== null && <Typography.Text data-testid="topup-price">{t('online.price', { price })}</Typography.Text>}
        <Space>
          <Button
            type="primary"
            loading={paying}
            disabled={!onlineTopup}
            onClick={() => quiet(startPay('zfb'))}
            data-testid="pay-alipay"
          >
            {t('online.alipay')}
          </Button>
          <Button
            type="primary"
            loading={paying}
            disabled={!onlineTopup}
            onClick={() => quiet(startPay('wx'))}
            style={onlineTopup ? { background: '#07c160' } : undefined}
            data-testid="pay-wechat"
          >
            {t('online.wechat')}
          </Button>
        </Space>
      </Space>
      <StripeSection />
      <CreemSection />
      <TopUpHistory />
    </Card>
  );
}
