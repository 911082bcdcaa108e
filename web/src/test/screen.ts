// A screen of a chosen width for antd's breakpoints (Grid.useBreakpoint, the phone layouts): the test setup's
// matchMedia stub answers "no" to every media query, which antd reads as the narrowest screen.
const realMatchMedia = window.matchMedia;

/** Answers the media queries as a screen `width` px wide would, until `restoreScreen`. */
export function screenWidth(width: number) {
  window.matchMedia = ((query: string) => {
    const min = /min-width:\s*(\d+)px/.exec(query);
    const max = /max-width:\s*(\d+(?:\.\d+)?)px/.exec(query);
    const matches = (!min || width >= Number(min[1])) && (!max || width <= Number(max[1]));
    return { ...realMatchMedia(query), matches, media: query };
  }) as typeof window.matchMedia;
}

/** Puts the setup's matchMedia back (call it after each test that set a width). */
export function restoreScreen() {
  window.matchMedia = realMatchMedia;
}
