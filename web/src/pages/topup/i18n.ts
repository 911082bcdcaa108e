// Strings of the wallet page (namespace `topup`); zh texts are the spec's / new-api's Chinese texts.
import { registerBundle } from '../../i18n/index.js';
import { splitPairs } from '../../components/i18nPairs.js';

registerBundle(
  'topup',
  splitPairs({
    title: ['钱包', 'Wallet'],
    balance: ['当前余额', 'Balance'],
    'redeem.title': ['兑换余额', 'Redeem a code'],
    'redeem.placeholder': ['请输入兑换码', 'Enter a redemption code'],
    'redeem.submit': ['兑换', 'Redeem'],
    'redeem.submitting': ['兑换中...', 'Redeeming...'],
    'redeem.getCode': ['获取兑换码', 'Get a code'],
    'redeem.success': ['兑换成功！', 'Redeemed!'],
    'redeem.credited': ['成功兑换额度：{{quota}}', 'Credited: {{quota}}'],
    'redeem.noLink': ['管理员未设置充值链接', 'The administrator has not set a top-up link'],
    'online.title': ['在线充值', 'Online top-up'],
    'online.amount': ['充值数量', 'Amount'],
    'online.amountHintCurrency': ['单位：美元额度，最低 {{min}}', 'In dollars of quota, at least {{min}}'],
    'online.amountHintQuota': ['单位：额度点数，最低 {{min}}', 'In quota points, at least {{min}}'],
    'online.price': ['实付金额：{{price}} 元', 'To pay: {{price}}'],
    'online.alipay': ['支付宝', 'Alipay'],
    'online.wechat': ['微信', 'WeChat'],
    'online.disabledNote': ['管理员未开启在线充值，可使用兑换码充值。', 'Online top-up is off; use a redemption code.'],
    'confirm.title': ['充值确认', 'Confirm top-up'],
    'confirm.amount': ['充值数量：{{amount}}', 'Amount: {{amount}}'],
    'confirm.price': ['实付金额：{{price}} 元', 'To pay: {{price}}'],
    'confirm.ok': ['确定', 'OK'],
    'confirm.cancel': ['取消', 'Cancel'],
    'err.code': ['请输入兑换码！', 'Please enter a redemption code!'],
    'err.min': ['充值数量不能小于 {{min}}', 'The amount must be at least {{min}}'],
    'err.online': ['管理员未开启在线充值！', 'Online top-up is not enabled by the administrator!'],
    'err.link': ['超级管理员未设置充值链接！', 'The super administrator has not set a top-up link!'],
    'err.request': ['请求失败', 'Request failed'],
    'msg.redirecting': ['正在跳转到支付页面…', 'Opening the payment page…'],
  }),
);
