// Stripe top-up on the wallet page (new-api's /api/user/stripe/*; new-api-compat.md §29): shown only when
// /api/status says Stripe is on, with its own minimum; the server quotes the price, and paying opens the Checkout
// page whose link the server answers.
import { useState } from 'react';
import { useMutation, useQuery } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { App as AntApp, Button, Divider, InputNumber, Space, Typography } from 'antd';
import { quiet } from '../../components/quiet.js';
import { useStatus } from '../../context/status.js';
import { api } from '../../lib/api.js';
import { translateServerMessage } from '../../i18n/server-message.js';
import { displayInCurrency } from '../../lib/render.js';
import './i18n.js';
import { checkAmount, effectiveMinTopup, normalizeAmount, paySucceeded, type PayAnswer } from './logic.js';

export function StripeSection() {
  const { status } = useStatus();
  if (!status.enable_stripe_topup) return null;
  return <StripeForm />;
}

function StripeForm() {
  const { t } = useTranslation('topup');
  const { message } = AntApp.useApp();
  const { status } = useStatus();
  // the same unit rule as the EPay minimum, applied to Stripe's own minimum
  const min = effectiveMinTopup({ ...status, min_topup: status.stripe_min_topup });
  const [amount, setAmount] = useState<number>(() => normalizeAmount(min));
  const valid = checkAmount(amount, min).ok;

  const price = useQuery({
    queryKey: ['topup', 'stripe-amount', amount] as const,
    enabled: valid,
    queryFn: async (): Promise<string> => {
      const res = (await api.post('/api/user/stripe/amount', { amount })) as unknown as PayAnswer<string>;
      if (!paySucceeded(res)) throw new Error(translateServerMessage(String(res.data)));
      return res.data;
    },
  });

  const payRequest = useMutation({
    mutationFn: async (value: number) =>
      (await api.post('/api/user/stripe/pay', {
        amount: value,
        payment_method: 'stripe',
      })) as unknown as PayAnswer<{ pay_link?: string } | string>,
  });

  const pay = async () => {
    const check = checkAmount(amount, min);
    if (!check.ok) {
      message.error(t('err.min', { min: check.min }));
      return;
    }
    const res = await payRequest.mutateAsync(check.amount);
    const link = typeof res.data === 'object' && res.data ? res.data.pay_link : undefined;
    if (!paySucceeded(res) || !link) {
      // payment answers carry their error in `data`, outside the envelope api.ts translates
      message.error(translateServerMessage(String(typeof res.data === 'string' ? res.data : res.message)));
      return;
    }
    message.info(t('msg.redirecting'));
    window.open(link, '_blank');
  };

  return (
    <div data-testid="stripe-section">
      <Divider />
      <Typography.Title level={5}>{t('stripe.title')}</Typography.Title>
      <Space orientation="vertical" style={{ width: '100%' }}>
        <Space wrap align="center">
          <span>{t('online.amount')}</span>
          <InputNumber
            value={amount}
            min={1}
            precision={0}
            onChange={(v) => setAmount(normalizeAmount(v))}
            style={{ width: 200 }}
            data-testid="stripe-amount"
          />
          <Typography.Text type="secondary" data-testid="stripe-min">
            {displayInCurrency() ? t('stripe.hintCurrency', { min }) : t('stripe.hintQuota', { min })}
          </Typography.Text>
        </Space>
        {valid && price.data && (
          <Typography.Text data-testid="stripe-price">{t('stripe.price', { price: price.data })}</Typography.Text>
        )}
        <Button
          type="primary"
          loading={payRequest.isPending}
          onClick={() => quiet(pay())}
          style={{ background: '#635bff' }}
          data-testid="pay-stripe"
        >
          {t('stripe.pay')}
        </Button>
      </Space>
    </div>
  );
}
