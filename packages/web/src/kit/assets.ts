// The dashboard's two static files, served from our own origin (no CDN, no
// external font or script): the stylesheet (light and dark, from 390 px up)
// and a small script for progressive niceties only (copy buttons). Every page
// works without the script. Both are served under a content-hash version, so
// they can be cached and the CSP needs no 'unsafe-inline'.
import { sha256Hex } from "@sms/crypto";

const CSS = `
:root{color-scheme:light dark;--bg:#f6f7f9;--card:#fff;--text:#1b1f24;--muted:#57606a;--accent:#0b57d0;--accent-text:#fff;--border:#d0d7de;--ok:#1a7f37;--warn:#9a6700;--bad:#cf222e;--info:#0969da;--subtle:#eef1f4;
--s-queued:#6e7781;--s-submitted:#0969da;--s-delivered:#1a7f37;--s-undeliverable:#bc4c00;--s-failed:#cf222e;--s-unknown:#8250df;--bar:#0b57d0}
@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--card:#161b22;--text:#e6edf3;--muted:#9da7b3;--accent:#79b8ff;--accent-text:#0d1117;--border:#30363d;--ok:#3fb950;--warn:#d29922;--bad:#ff7b72;--info:#58a6ff;--subtle:#1f2630;
--s-queued:#8b949e;--s-submitted:#58a6ff;--s-delivered:#3fb950;--s-undeliverable:#f0883e;--s-failed:#ff7b72;--s-unknown:#bc8cff;--bar:#79b8ff}}
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;background:var(--bg);color:var(--text);font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
a{color:var(--accent)}
.skip{position:absolute;left:-999px;top:0;background:var(--card);padding:.5rem 1rem;z-index:10}
.skip:focus{left:.5rem;top:.5rem}
header.top{background:var(--card);border-bottom:1px solid var(--border)}
.top-inner{max-width:80rem;margin:0 auto;padding:.6rem 1rem;display:flex;flex-wrap:wrap;align-items:center;gap:.5rem 1.25rem}
.brand{font-weight:700;text-decoration:none;color:var(--text);margin-right:auto}
.top nav ul{display:flex;gap:1rem;list-style:none;margin:0;padding:0;flex-wrap:wrap}
.top nav a{text-decoration:none;font-weight:600}
.top nav a[aria-current=page]{text-decoration:underline;text-underline-offset:.3em}
.who{display:flex;align-items:center;gap:.5rem;color:var(--muted);font-size:.92rem;flex-wrap:wrap}
.who form{margin:0}
.dev-banner{background:#fff8c5;color:#3b2300;border-bottom:1px solid #d4a72c;padding:.5rem 1rem;text-align:center;font-size:.95rem}
@media (prefers-color-scheme:dark){.dev-banner{background:#3b2e00;color:#f8e3a1;border-color:#9e6a03}}
main{max-width:80rem;margin:0 auto;padding:1.25rem 1rem 3rem}
main.narrow{max-width:42rem}
h1{font-size:1.6rem;line-height:1.25;margin:.25rem 0 1rem;overflow-wrap:anywhere}
h2{font-size:1.15rem;margin:2rem 0 .75rem}
h3{font-size:1rem;margin:1.25rem 0 .5rem}
p{margin:.5rem 0 1rem}
.muted{color:var(--muted);font-size:.92rem}
code,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.9em;overflow-wrap:anywhere}
.crumbs{font-size:.92rem;color:var(--muted);margin:0}
.crumbs a{color:var(--muted)}
.tabs{display:flex;flex-wrap:nowrap;overflow-x:auto;scrollbar-width:thin;gap:.25rem;border-bottom:1px solid var(--border);margin:0 0 1.25rem;padding:0;list-style:none}
.tabs{position:relative}
.tabs li{flex:none}
.table-wrap td time{white-space:normal;display:inline-block;min-width:4.5rem}
.table-wrap td .key-name{display:block}
.table-wrap td code.clip{display:inline-block;max-width:7.5rem;overflow:hidden;text-overflow:ellipsis;vertical-align:bottom}
.tabs a{display:block;padding:.55rem .85rem;text-decoration:none;color:var(--muted);font-weight:600;border-bottom:3px solid transparent;white-space:nowrap}
.tabs a[aria-current=page]{color:var(--text);border-bottom-color:var(--accent)}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(11rem,1fr));gap:.75rem;margin:1rem 0}
.card{background:var(--card);border:1px solid var(--border);border-radius:10px;padding:.85rem 1rem}
.card .label{color:var(--muted);font-size:.85rem;margin:0}
.card .value{font-size:1.35rem;font-weight:700;margin:.15rem 0 0;overflow-wrap:anywhere}
.card .sub{font-size:.85rem;color:var(--muted);margin:.2rem 0 0}
.panel{background:var(--card);border:1px solid var(--border);border-radius:10px;padding:1rem;margin:1rem 0}
.panel>h2:first-child,.panel>h3:first-child{margin-top:0}
.note{border-left:4px solid var(--info);background:var(--card);padding:.6rem .9rem;margin:1rem 0;border-radius:0 8px 8px 0}
.note.ok{border-color:var(--ok)}.note.warn{border-color:var(--warn)}.note.bad{border-color:var(--bad)}
.note p{margin:.25rem 0}
.table-wrap:focus-visible{outline-offset:0}
.table-wrap{position:relative;overflow-x:auto;border:1px solid var(--border);border-radius:10px;background:var(--card)}
table{border-collapse:collapse;width:100%;font-size:.9rem}
th,td{text-align:left;padding:.5rem .55rem;border-bottom:1px solid var(--border);vertical-align:top}
th{font-size:.82rem;color:var(--muted);font-weight:600;white-space:nowrap}
tbody tr:last-child td{border-bottom:0}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
.status{display:inline-block;padding:.05rem .5rem;border-radius:999px;font-size:.82rem;font-weight:600;border:1px solid currentColor;white-space:nowrap}
.status-queued{color:var(--s-queued)}.status-submitted{color:var(--s-submitted)}.status-delivered{color:var(--s-delivered)}
.status-undeliverable{color:var(--s-undeliverable)}.status-failed{color:var(--s-failed)}.status-unknown{color:var(--s-unknown)}
.state-active{color:var(--ok)}.state-suspended{color:var(--bad)}.state-revoked{color:var(--muted)}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:.35rem 1.25rem;margin:0}
dl.facts dt{color:var(--muted)}
dl.facts dd{margin:0;overflow-wrap:anywhere}
form{margin:0}
.form-grid{display:grid;gap:.75rem;grid-template-columns:repeat(auto-fit,minmax(12rem,1fr));align-items:end}
.field{display:flex;flex-direction:column;gap:.25rem}
label{font-weight:600;font-size:.92rem}
.hint{font-weight:400;color:var(--muted);font-size:.85rem}
input,select,textarea{font:inherit;color:var(--text);background:var(--card);border:1px solid var(--border);border-radius:8px;padding:.55rem .65rem;min-height:44px;width:100%}
textarea{min-height:6rem;resize:vertical}
input[readonly]{background:var(--subtle)}
.actions{display:flex;flex-wrap:wrap;gap:.6rem;align-items:center;margin:.75rem 0}
button,.button{font:inherit;font-weight:600;padding:.55rem 1rem;border-radius:8px;border:1px solid var(--border);background:var(--card);color:var(--text);cursor:pointer;min-height:44px;text-decoration:none;display:inline-flex;align-items:center;justify-content:center}
button.primary,.button.primary{background:var(--accent);border-color:var(--accent);color:var(--accent-text)}
button.danger,.button.danger{background:var(--bad);border-color:var(--bad);color:#fff}
@media (prefers-color-scheme:dark){button.danger,.button.danger{background:#b62324;border-color:#b62324;color:#fff}}
button.link{background:none;border:0;color:var(--accent);padding:0 .25rem;min-height:auto;text-decoration:underline;font-weight:400}
button:hover,.button:hover{filter:brightness(.95)}
button:disabled{opacity:.55;cursor:not-allowed}
:focus-visible{outline:3px solid var(--accent);outline-offset:2px}
.secret{display:flex;gap:.5rem;flex-wrap:wrap}
.secret input{flex:1 1 18rem;font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
.pager{display:flex;justify-content:space-between;gap:1rem;margin:.75rem 0;flex-wrap:wrap}
.chart{margin:.5rem 0 0}
.chart svg{display:block;width:100%;height:auto;background:var(--card);border:1px solid var(--border);border-radius:10px}
.chart .grid{stroke:var(--border);stroke-width:1}
.chart .bar{fill:var(--bar)}
.chart .s-queued{fill:var(--s-queued)}.chart .s-submitted{fill:var(--s-submitted)}.chart .s-delivered{fill:var(--s-delivered)}
.chart .s-undeliverable{fill:var(--s-undeliverable)}.chart .s-failed{fill:var(--s-failed)}.chart .s-unknown{fill:var(--s-unknown)}
.plot{display:grid;grid-template-columns:auto minmax(0,1fr);column-gap:.4rem}
.plot svg,.plot .axis{grid-column:2}
.y-axis{grid-row:1;display:flex;flex-direction:column;justify-content:space-between;color:var(--muted);font-size:.8rem;line-height:1;text-align:right;font-variant-numeric:tabular-nums;padding:.15rem 0}
.chart-empty{border:1px dashed var(--border);border-radius:10px;padding:1.5rem 1rem;text-align:center;color:var(--muted);margin:.5rem 0}
.project-name{overflow-wrap:anywhere}
.axis{display:flex;justify-content:space-between;color:var(--muted);font-size:.8rem;margin:.2rem .25rem 0}
.legend{display:flex;flex-wrap:wrap;gap:.4rem 1rem;list-style:none;padding:0;margin:.5rem 0;font-size:.85rem}
.legend li{display:flex;align-items:center;gap:.35rem}
.swatch{display:inline-block;width:.8rem;height:.8rem;border-radius:2px;background:var(--bar)}
.swatch.s-queued{background:var(--s-queued)}.swatch.s-submitted{background:var(--s-submitted)}.swatch.s-delivered{background:var(--s-delivered)}
.swatch.s-undeliverable{background:var(--s-undeliverable)}.swatch.s-failed{background:var(--s-failed)}.swatch.s-unknown{background:var(--s-unknown)}
.meter{height:.6rem;background:var(--subtle);border-radius:999px;overflow:hidden;margin:.35rem 0}
.meter span{display:block;height:100%;background:var(--accent)}
.meter .w0{width:0}
ol.timeline{list-style:none;padding:0;margin:0;border-left:2px solid var(--border)}
ol.timeline li{position:relative;padding:.1rem 0 1rem 1.1rem}
ol.timeline li::before{content:"";position:absolute;left:-.45rem;top:.45rem;width:.8rem;height:.8rem;border-radius:50%;background:var(--card);border:2px solid var(--accent)}
details summary{cursor:pointer;font-weight:600;margin:.5rem 0}
.grid-2{display:grid;gap:1rem;grid-template-columns:repeat(auto-fit,minmax(18rem,1fr))}
.project-top{display:flex;flex-wrap:wrap;align-items:center;justify-content:space-between;gap:.5rem 1rem}
.search{display:flex;gap:.4rem;flex:1 1 18rem;max-width:32rem}
.search input{flex:1 1 auto;min-width:0}
.low-balance{border:1px solid var(--warn);border-left-width:4px;background:var(--card);padding:.5rem .9rem;margin:0 0 1rem;border-radius:0 8px 8px 0}
.low-balance p{margin:.2rem 0}
.tag{display:inline-block;font-size:.78rem;padding:0 .4rem;border-radius:999px;background:var(--subtle);color:var(--text);white-space:nowrap}
.http{font-weight:700;font-variant-numeric:tabular-nums}.http-ok{color:var(--ok)}.http-warn{color:var(--warn)}.http-bad{color:var(--bad)}
.table-wrap td{white-space:nowrap}
.table-wrap td code,.table-wrap td .mono,code.id{white-space:nowrap;overflow-wrap:normal;word-break:keep-all}
ol.checklist{list-style:none;padding:0;margin:0}
ol.checklist li{padding:.3rem 0}
ol.checklist .tick{display:inline-block;width:1.4rem;font-weight:700}
ol.checklist li.done .tick{color:var(--ok)}
fieldset.recipients{border:1px solid var(--border);border-radius:8px;margin:1rem 0;padding:.5rem .8rem}
.choice{display:flex;gap:.5rem;align-items:flex-start;padding:.25rem 0}
.choice input{width:auto;min-height:auto;margin-top:.3rem}
.choice label{font-weight:400}
ol.events{list-style:none;padding:0;margin:0 0 1rem;background:var(--card);border:1px solid var(--border);border-radius:10px}
ol.events li{padding:.5rem .8rem;border-bottom:1px solid var(--border);overflow-wrap:anywhere}
ol.events li:last-child{border-bottom:0}
ol.events code{white-space:nowrap;overflow-wrap:normal}
.table-wrap td .said{display:inline-block;white-space:normal;min-width:16rem;max-width:32rem}
:target{outline:2px solid var(--accent);outline-offset:2px}
.sr-only{position:absolute;width:1px;height:1px;padding:0;margin:-1px;overflow:hidden;clip:rect(0,0,0,0);white-space:nowrap;border:0}
@media (max-width:40rem){.dev-banner{font-size:.85rem;padding:.3rem .75rem;line-height:1.35}.top-inner{padding:.4rem .75rem;gap:.25rem 1rem}.who{font-size:.85rem}h1{font-size:1.35rem;margin:.25rem 0 .5rem}.tabs{margin-bottom:1rem}.tabs a{padding:.5rem .7rem}dl.facts{grid-template-columns:1fr}dl.facts dd{margin-bottom:.4rem}main{padding:1rem .75rem 2.5rem}th,td{padding:.45rem .5rem}}
`;

// The meter widths are classes (no style attributes: the CSP allows none).
const METER = Array.from({ length: 21 }, (_, i) => `.meter .w${i * 5}{width:${i * 5}%}`).join("\n");

const JS = `// The dashboard's only script: progressive niceties. Every page works without it.
"use strict";
for (const button of document.querySelectorAll("button[data-copy]")) {
  button.hidden = false;
  button.addEventListener("click", async () => {
    const source = document.getElementById(button.dataset.copy);
    if (!source) return;
    const text = "value" in source ? source.value : source.textContent;
    try {
      await navigator.clipboard.writeText(text);
      button.textContent = "Copied";
    } catch {
      if (typeof source.select === "function") source.select();
      button.textContent = "Selected: press Ctrl+C";
    }
  });
}
// A project's tabs are one row that scrolls sideways on a phone: the current one in view.
for (const current of document.querySelectorAll(".tabs a[aria-current=page]")) {
  const tabs = current.closest(".tabs");
  if (tabs && current.offsetLeft + current.offsetWidth > tabs.clientWidth) tabs.scrollLeft = current.offsetLeft - 16;
}
for (const input of document.querySelectorAll("input[data-select-on-focus]")) {
  input.addEventListener("focus", () => input.select());
}
`;

export type Asset = { path: string; body: string; type: string; version: string };

export async function dashboardAssets(): Promise<{ css: Asset; js: Asset }> {
  const css = `${CSS}${METER}\n`;
  const [cssVersion, jsVersion] = await Promise.all([sha256Hex(css), sha256Hex(JS)]);
  return {
    css: {
      path: "dashboard.css",
      body: css,
      type: "text/css; charset=utf-8",
      version: cssVersion.slice(0, 12),
    },
    js: {
      path: "dashboard.js",
      body: JS,
      type: "text/javascript; charset=utf-8",
      version: jsVersion.slice(0, 12),
    },
  };
}
