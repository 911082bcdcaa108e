// One line of help under every settings field that has no `extra` note of its own (issue 46 point 11), in both
// languages; FieldItem shows `help.<option key>` (fields.test.ts checks that every field has one).
import type { Pairs } from '../../components/i18nPairs.js';

/** The i18n key of a field's one-line help when it has no `extra` note of its own. */
export const helpKey = (key: string) => `help.${key}`;

export const helpPairs: Pairs = {
  'help.checkin_setting.enabled': [
    '开启后用户可在钱包页面每天签到一次领取额度（按用量限制时区计算日期）',
    'On: users can check in once a day on the wallet page for a reward (days of the usage limit time zone)',
  ],
  'help.checkin_setting.min_quota': [
    '每次签到奖励的最小额度（原始额度点数）',
    'The smallest reward of a check-in, in quota points',
  ],
  'help.checkin_setting.max_quota': [
    '每次签到奖励的最大额度；奖励在最小与最大之间随机',
    'The largest reward of a check-in; each reward is drawn between the two',
  ],
  'help.TopUpLink': [
    '钱包页面“获取兑换码”按钮打开的链接，例如发卡网站的购买页',
    'Where the wallet’s “get a redemption code” button leads, e.g. a card shop’s purchase page',
  ],
  'help.general_setting.docs_link': [
    '顶栏“文档”链接的地址；留空则不显示',
    'The address of the top bar’s Docs link; empty hides it',
  ],
  'help.QuotaPerUnit': [
    '额度与美元的换算比例，用于价格和余额的显示与计费',
    'How quota converts to dollars, for prices, balances and billing',
  ],
  'help.RetryTimes': [
    '上游请求失败时换一个渠道重试的次数；0 表示不重试',
    'How many times a failed upstream request is retried on another channel; 0: no retry',
  ],
  'help.DisplayInCurrencyEnabled': [
    '开启后额度以美元金额显示，关闭则显示原始额度数字',
    'On: quota is shown as dollar amounts; off: as raw quota numbers',
  ],
  'help.DisplayTokenStatEnabled': [
    '影响 /dashboard/billing 等 OpenAI 账单接口：开启后返回调用令牌的额度',
    'For the OpenAI billing endpoints (/dashboard/billing…): on, they report the calling token’s quota',
  ],
  'help.DefaultCollapseSidebar': [
    '用户尚未自行展开或折叠时，侧边栏默认折叠',
    'The sidebar starts collapsed for users who have not chosen themselves',
  ],
  'help.DemoSiteEnabled': [
    '在顶栏标示为演示站点，供公开试用的站点使用',
    'Marks the site as a demo in the top bar, for public trial sites',
  ],
  'help.DrawingEnabled': [
    '开启 Midjourney 绘图接口（/mj）与绘图日志页面',
    'Turns on the Midjourney drawing API (/mj) and the drawing log page',
  ],
  'help.MjNotifyEnabled': [
    '允许调用方传入 notifyHook：任务变化时服务器会请求该地址，对方因此可得知服务器 IP',
    'Lets callers pass a notifyHook URL that the server calls on task changes, which shows them the server’s IP',
  ],
  'help.MjAccountFilterEnabled': [
    '把调用方的 accountFilter（指定上游账号）转发给上游；关闭则删除该参数',
    'Forwards the caller’s accountFilter (picking the upstream account); off removes it',
  ],
  'help.MjForwardUrlEnabled': [
    '回答中的图片地址改为本服务器地址，由服务器向上游取图，调用方看不到上游地址',
    'Image URLs in answers point to this server, which fetches them upstream; callers never see the upstream',
  ],
  'help.MjModeClearEnabled': [
    '去掉提示词里的速度参数，使用渠道自己的模式',
    'Removes speed flags from prompts so that the channel’s own mode applies',
  ],
  'help.MjActionCheckSuccessEnabled': [
    '拒绝对尚未成功的任务进行放大、变换等操作',
    'Refuses upscale, variation and other actions on a task that has not succeeded',
  ],
  'help.EmailDomainRestrictionEnabled': [
    '开启后只有白名单中的邮箱域名可以注册',
    'On: only email domains of the whitelist below can register',
  ],
  'help.EmailAliasRestrictionEnabled': [
    '拒绝带点号或加号别名的邮箱，防止一个邮箱注册多个账号',
    'Refuses addresses with dot or plus aliases, so one mailbox cannot register many accounts',
  ],
  'help.EmailDomainWhitelist': [
    '开启域名白名单后，只有这些域名的邮箱可以注册',
    'With the whitelist on, only addresses at these domains can register',
  ],
  'help.SystemName': [
    '显示在顶栏、浏览器标题和邮件中的站点名称',
    'The site name in the top bar, the browser title and emails',
  ],
  'help.Logo': [
    '顶栏和浏览器标签页使用的图片地址；留空使用默认图标',
    'Image URL for the top bar and the browser tab; empty: the default logo',
  ],
  'help.DataExportEnabled': [
    '定期汇总用量供数据看板使用；关闭后看板不再更新',
    'Summarises usage periodically for the dashboard; off, the dashboard stops updating',
  ],
  'help.DataExportDefaultTime': ['打开数据看板时图表的默认时间粒度', 'The chart granularity the dashboard opens with'],
  'help.general_setting.ping_interval_seconds': ['两次 Ping 之间的秒数', 'Seconds between two pings'],
  'help.GitHubClientId': ['GitHub OAuth App 的 Client ID', 'The Client ID of your GitHub OAuth App'],
  'help.GitHubClientSecret': [
    'GitHub OAuth App 的 Client Secret；留空则不修改',
    'The Client Secret of your GitHub OAuth App; empty keeps the saved one',
  ],
  'help.LinuxDOClientId': ['Linux DO Connect 应用的 Client ID', 'The Client ID of your Linux DO Connect application'],
  'help.LinuxDOClientSecret': [
    'Linux DO Connect 应用的 Client Secret；留空则不修改',
    'The Client Secret of your Linux DO application; empty keeps the saved one',
  ],
  'help.PasswordLoginEnabled': ['用户名或邮箱加密码登录', 'Sign-in with a username or email and a password'],
  'help.PasswordRegisterEnabled': ['用用户名和密码注册新账号', 'Registration with a username and a password'],
  'help.EmailVerificationEnabled': [
    '注册时须填写发到邮箱的验证码（需配置 SMTP）',
    'Registration asks for a code sent by email (needs SMTP)',
  ],
  'help.RegisterEnabled': ['关闭后任何方式都不能注册新用户', 'Off: no new account can be created in any way'],
  'help.GitHubOAuthEnabled': ['需先在下方配置 GitHub OAuth App', 'Needs the GitHub OAuth App configured below'],
  'help.LinuxDOOAuthEnabled': ['需先在下方配置 Linux DO OAuth', 'Needs Linux DO OAuth configured below'],
  'help.WeChatAuthEnabled': ['需先在下方配置 WeChat Server', 'Needs the WeChat server configured below'],
  'help.TelegramOAuthEnabled': ['需先在下方配置 Telegram Bot', 'Needs the Telegram bot configured below'],
  'help.TurnstileCheckEnabled': [
    '登录、注册和重置密码时进行人机校验（需配置 Turnstile）',
    'A human check on login, registration and password reset (needs Turnstile below)',
  ],
  'help.oidc.enabled': ['需先在下方配置 OIDC', 'Needs OIDC configured below'],
  'help.passkey.enabled': [
    '用户可在个人设置中绑定 Passkey 并用它登录',
    'Users can add a passkey in their settings and sign in with it',
  ],
  'help.LogConsumeEnabled': [
    '记录每次调用的模型、Token 数与费用；关闭后使用日志中不再有消费记录',
    'Records model, tokens and cost of every call; off, the usage logs get no consume rows',
  ],
  'help.AutomaticDisableChannelEnabled': [
    '上游返回额度用尽、密钥无效等错误或包含下方关键词时禁用该渠道',
    'Disables a channel whose upstream answers with quota, invalid-key or listed keyword errors',
  ],
  'help.AutomaticEnableChannelEnabled': [
    '被自动禁用的渠道在测试成功后重新启用',
    'Re-enables an automatically disabled channel once a test succeeds',
  ],
  'help.oidc.client_id': [
    '在身份提供方注册的应用的 Client ID',
    'The Client ID of the application registered with the provider',
  ],
  'help.oidc.client_secret': [
    '该应用的 Client Secret；留空则不修改',
    'That application’s Client Secret; empty keeps the saved one',
  ],
  'help.oidc.authorization_endpoint': ['用户登录时跳转到的地址', 'Where users are sent to sign in'],
  'help.oidc.token_endpoint': ['服务器用授权码换取令牌的地址', 'Where the server exchanges the code for tokens'],
  'help.oidc.user_info_endpoint': ['服务器读取用户信息的地址', 'Where the server reads the user’s profile'],
  'help.PayAddress': ['易支付接口的地址', 'The address of the EPay gateway'],
  'help.EpayId': ['易支付分配的商户 ID', 'The merchant ID EPay gave you'],
  'help.EpayKey': [
    '易支付的商户密钥，用于签名；留空则不修改',
    'The EPay merchant key used for signing; empty keeps the saved one',
  ],
  'help.StripeApiSecret': [
    'Stripe 的密钥（sk_ 或 rk_ 开头）；留空则不修改',
    'The Stripe secret key (sk_ or rk_); empty keeps the saved one',
  ],
  'help.StripeWebhookSecret': [
    'Stripe Webhook 的签名密钥（whsec_ 开头）；留空则不修改',
    'The Stripe webhook signing secret (whsec_); empty keeps the saved one',
  ],
  'help.StripePriceId': ['每单位额度对应的 Stripe 价格', 'The Stripe price of one unit of quota'],
  'help.StripeUnitPrice': [
    '钱包页显示的每单位价格，应与 Stripe 价格一致',
    'The unit price the wallet shows; keep it equal to the Stripe price',
  ],
  'help.StripeMinTopUp': ['Stripe 单笔最少充值的单位数', 'The fewest units one Stripe top-up may buy'],
  'help.StripePromotionCodesEnabled': [
    '支付页面可输入 Stripe 优惠码',
    'Buyers may enter Stripe promotion codes at checkout',
  ],
  'help.CreemApiKey': ['Creem 的 API 密钥；留空则不修改', 'The Creem API key; empty keeps the saved one'],
  'help.CreemWebhookSecret': [
    'Creem Webhook 的签名密钥，用于校验回调；留空则不修改',
    'The Creem webhook signing secret that verifies callbacks; empty keeps the saved one',
  ],
  'help.CreemTestMode': ['开启后调用 Creem 测试环境', 'On: calls go to the Creem test environment'],
  'help.CreemProducts': [
    'JSON 数组，每项 {"productId","name","price","currency","quota"}，quota 为充值额度（点数）',
    'A JSON array of {"productId","name","price","currency","quota"}; quota is the quota credited (points)',
  ],
  'help.ModelRequestRateLimitEnabled': [
    '按下方周期和次数限制每个用户对模型的请求',
    'Limits each user’s model requests by the window and counts below',
  ],
  'help.CheckSensitiveEnabled': ['屏蔽词检查的总开关', 'The master switch of the sensitive word check'],
  'help.CheckSensitiveOnPromptEnabled': [
    '请求中的提示词含屏蔽词时拒绝请求，不扣费',
    'Refuses a request whose prompt contains a listed word, without charging',
  ],
  'help.CheckSensitiveOnCompletionEnabled': ['检查上游返回的内容', 'Checks the content the upstream returns'],
  'help.StopOnSensitiveEnabled': [
    '在补全内容中发现屏蔽词时立即结束回答',
    'Ends the answer as soon as a listed word appears in the completion',
  ],
  'help.SMTPServer': ['发信服务器的主机名', 'Host name of the mail server'],
  'help.SMTPPort': ['通常为 465（SSL）或 587', 'Usually 465 (SSL) or 587'],
  'help.SMTPAccount': ['登录发信服务器的账户', 'The account that signs in to the mail server'],
  'help.SMTPFrom': ['邮件的发件人地址；留空使用 SMTP 账户', 'The From address of emails; empty uses the SMTP account'],
  'help.SMTPToken': ['SMTP 密码或授权码；留空则不修改', 'SMTP password or app token; empty keeps the saved one'],
  'help.TelegramBotToken': [
    'BotFather 给出的 Bot Token；留空则不修改',
    'The bot token from BotFather; empty keeps the saved one',
  ],
  'help.TelegramBotName': [
    'Bot 的用户名（不含 @），用于登录按钮',
    'The bot’s username (without @), for the login button',
  ],
  'help.TurnstileSiteKey': ['Cloudflare Turnstile 站点的 Site Key', 'The Site Key of your Cloudflare Turnstile site'],
  'help.TurnstileSecretKey': [
    'Turnstile 的 Secret Key，服务器用它校验；留空则不修改',
    'The Turnstile Secret Key the server verifies with; empty keeps the saved one',
  ],
  'help.WeChatServerAddress': ['WeChat Server 的地址', 'The address of your WeChat server'],
  'help.WeChatServerToken': [
    '访问 WeChat Server 的凭证；留空则不修改',
    'The token for your WeChat server; empty keeps the saved one',
  ],
  'help.WeChatAccountQRCodeImageURL': [
    '登录页上显示的公众号二维码图片',
    'The official account QR code shown on the login page',
  ],
  'help.WorkerUrl': ['Worker 的地址；留空则直接访问', 'The worker’s address; empty fetches directly'],
  'help.WorkerValidKey': [
    'Worker 校验请求用的密钥；留空则不修改',
    'The key the worker checks requests with; empty keeps the saved one',
  ],
};
