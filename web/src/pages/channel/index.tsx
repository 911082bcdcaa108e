export default function ChannelPage() {
  return <div data-page="channel" />;
}
