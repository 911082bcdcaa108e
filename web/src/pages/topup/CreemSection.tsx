// Creem top-up on the wallet page (new-api's /api/user/creem/pay; new-api-compat.md §31): shown only when
// /api/status says Creem is on, one card per product of the CreemProducts option with its price and the quota it
// credits; buying asks for a confirmation, then opens the checkout page whose link the server answers.
import { useMutation } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { App as AntApp, Button, Card, Divider, Space, Typography } from 'antd';
import { useStatus, type Status } from '../../context/status.js';
import { api } from '../../lib/api.js';
import { translateServerMessage } from '../../i18n/server-message.js';
import { renderQuota } from '../../lib/render.js';
import './i18n.js';
import { paySucceeded, type PayAnswer } from './logic.js';

type CreemProduct = NonNullable<Status['creem_products']>[number];

/** The product's price in its currency, as the buyer will pay it (`9.50 USD`). */
export function creemPrice(p: Pick<CreemProduct, 'price' | 'currency'>): string {
  return `${Number(p.price).toFixed(2)} ${p.currency || 'USD'}`;
}

export function CreemSection() {
  const { status } = useStatus();
  const products = status.creem_products ?? [];
  if (!status.enable_creem_topup || products.length === 0) return null;
  return <CreemProducts products={products} />;
}

function CreemProducts({ products }: { products: CreemProduct[] }) {
  const { t } = useTranslation('topup');
  const { message, modal } = AntApp.useApp();

  const payRequest = useMutation({
    mutationFn: async (productId: string) =>
      (await api.post('/api/user/creem/pay', {
        product_id: productId,
        payment_method: 'creem',
      })) as unknown as PayAnswer<{ checkout_url?: string } | string>,
  });

  const pay = async (product: CreemProduct) => {
    const res = await payRequest.mutateAsync(product.productId);
    const link = typeof res.data === 'object' && res.data ? res.data.checkout_url : undefined;
    if (!paySucceeded(res) || !link) {
      // payment answers carry their error in `data`, outside the envelope api.ts translates
      message.error(translateServerMessage(String(typeof res.data === 'string' ? res.data : res.message)));
      return;
    }
    message.info(t('msg.redirecting'));
    window.open(link, '_blank');
  };

  const confirm = (product: CreemProduct) =>
    modal.confirm({
      title: t('confirm.title'),
      content: (
        <>
          <Typography.Paragraph>{t('creem.product', { name: product.name })}</Typography.Paragraph>
          <Typography.Paragraph>{t('creem.quota', { quota: renderQuota(product.quota) })}</Typography.Paragraph>
          <Typography.Paragraph>{t('creem.price', { price: creemPrice(product) })}</Typography.Paragraph>
        </>
      ),
      okText: t('confirm.ok'),
      cancelText: t('confirm.cancel'),
      centered: true,
      onOk: () => pay(product).catch(() => undefined),
    });

  return (
    <div data-testid="creem-section">
      <Divider />
      <Typography.Title level={5}>{t('creem.title')}</Typography.Title>
      <Space wrap>
        {products.map((p) => (
          <Card key={p.productId} size="small" style={{ minWidth: 160 }} data-testid={`creem-product-${p.productId}`}>
            <Typography.Text strong>{p.name}</Typography.Text>
            <div>{t('creem.quota', { quota: renderQuota(p.quota) })}</div>
            <div>{t('creem.price', { price: creemPrice(p) })}</div>
            <Button
              type="primary"
              size="small"
              style={{ marginTop: 8 }}
              loading={payRequest.isPending && payRequest.variables === p.productId}
              onClick={() => confirm(p)}
              data-testid={`creem-buy-${p.productId}`}
            >
              {t('creem.buy')}
            </Button>
          </Card>
        ))}
      </Space>
    </div>
  );
}
