"""The page's inline stylesheet and script (no file, font or script is fetched from anywhere).

The stylesheet sets the charts' colours as classes (see :mod:`.svg`), follows the reader's
``prefers-color-scheme`` and prints black on white with the item browser's controls hidden.
The script is the item browser: it unpacks the page's gzip+base64 item data with the
browser's own ``DecompressionStream``, filters by system, setting, category, language and
score, and opens an item in place (Enter or click). It writes untrusted text with
``textContent`` only, never as HTML.
"""

STYLE = """
:root{--bg:#fff;--fg:#1b1d21;--muted:#5c6370;--line:#d5d9e0;--panel:#f5f6f8;--accent:#2f6fdf;
--good:#1f8a4c;--bad:#c23b32;--s0:#2f6fdf;--s1:#e0792b;--s2:#2e9e6a;--s3:#b0389a;--s4:#7a5cd6;
--s5:#8a6d1f;--s6:#1f8fa6;--s7:#d2435a;--heat:#2f6fdf;color-scheme:light dark}
@media (prefers-color-scheme:dark){:root{--bg:#15171b;--fg:#e4e6ea;--muted:#9aa2ae;
--line:#3a3f48;--panel:#1f2227;--accent:#6fa0ff;--good:#4cc27f;--bad:#ff7a6e;--s0:#6fa0ff;
--s1:#f29a55;--s2:#4cc28a;--s3:#e071c8;--s4:#a993ff;--s5:#d2b35a;--s6:#5cc6dc;--s7:#ff7d92;
--heat:#6fa0ff}}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:14px/1.45 system-ui,-apple-system,
"Segoe UI",Roboto,"Noto Sans",sans-serif}
main{max-width:1340px;margin:0 auto;padding:18px 22px 48px}
h1{font-size:22px;margin:4px 0 2px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid
var(--line);padding-bottom:4px}h3{font-size:14px;margin:16px 0 6px}
.sub,.note,.muted{color:var(--muted)}.note{font-size:12.5px;margin:4px 0}
table{border-collapse:collapse;margin:6px 0 10px;font-variant-numeric:tabular-nums}
th,td{border-bottom:1px solid var(--line);padding:3px 7px;font-size:13px;text-align:left;vertical-align:top}
th{font-weight:600;background:var(--panel)}td.num,th.num{text-align:right;white-space:nowrap}
.scroll{overflow-x:auto;max-width:100%}.scroll td{white-space:nowrap}
dl.header{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;margin:8px 0}
dl.header dt{color:var(--muted)}dl.header dd{margin:0;word-break:break-word}
.chart{max-width:100%;height:auto;display:block;margin:6px 0 12px;font-size:12px}
.chart .label{fill:var(--fg)}.chart .tick{fill:var(--muted);font-size:11px}
.chart .axis{stroke:var(--fg);fill:none}.chart .grid{stroke:var(--line)}
.chart .whisker{stroke:var(--fg);stroke-width:1.3;fill:none}
.chart .reference{stroke:var(--muted);stroke-dasharray:4 3}
.chart .point{fill:var(--accent)}.chart .point.better{fill:var(--good)}
.chart .point.worse{fill:var(--bad)}
.chart .cell{fill:var(--heat)}.chart .cell-empty{fill:var(--panel)}
.chart .cell-text{fill:var(--fg);font-size:11px}
.s0{fill:var(--s0)}.s1{fill:var(--s1)}.s2{fill:var(--s2)}.s3{fill:var(--s3)}
.s4{fill:var(--s4)}.s5{fill:var(--s5)}.s6{fill:var(--s6)}.s7{fill:var(--s7)}
.better{color:var(--good)}.worse{color:var(--bad)}
details{margin:6px 0}summary{cursor:pointer}
#browser .filters{display:flex;flex-wrap:wrap;gap:8px 12px;align-items:center;margin:8px 0}
#browser label{font-size:12.5px;color:var(--muted)}
#browser select,#browser input,#browser button{font:inherit;color:var(--fg);
background:var(--panel);border:1px solid var(--line);border-radius:4px;padding:3px 6px}
#browser tr.item{cursor:pointer}#browser tr.item:focus,#browser tr.item:hover{
outline:2px solid var(--accent);outline-offset:-2px}
#browser td.resp{max-width:420px;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
.detail{background:var(--panel);padding:8px 12px}
.detail pre{white-space:pre-wrap;word-break:break-word;max-height:22em;overflow:auto;
background:var(--bg);border:1px solid var(--line);padding:6px 8px;margin:4px 0 10px;
font:12.5px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
.detail ol{margin:4px 0 10px;padding-left:22px}.detail li{margin:3px 0}
.tag{display:inline-block;font-size:11px;padding:0 5px;border-radius:3px;margin-right:4px;
border:1px solid var(--line);color:var(--muted)}.tag.oracle{border-color:var(--good);
color:var(--good);font-weight:600}
footer{margin-top:36px;font-size:12px;color:var(--muted)}
@media print{:root{--bg:#fff;--fg:#000;--muted:#444;--line:#bbb;--panel:#f2f2f2}
body{font-size:11px}#browser .filters,#browser .more{display:none}h2{break-after:avoid}
.chart,table{break-inside:avoid}main{max-width:none;padding:0}}
"""

SCRIPT = r"""
(function(){
"use strict";
var holder=document.getElementById("item-data");
var root=document.getElementById("browser");
if(!holder||!root){return;}
var PAGE=100,shown=PAGE,data=null,matches=[];
function el(tag,text,cls){var e=document.createElement(tag);
 if(text!==undefined&&text!==null){e.textContent=String(text);}if(cls){e.className=cls;}return e;}
function pct(v){return v===null||v===undefined?"\u2013":(100*v).toFixed(1);}
function unpack(b64){var bin=atob(b64),bytes=new Uint8Array(bin.length);
 for(var i=0;i<bin.length;i++){bytes[i]=bin.charCodeAt(i);}
 var stream=new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
 return new Response(stream).text().then(JSON.parse);}
function fill(select,values,names){values.forEach(function(v,i){
 var o=el("option",names?names[i]:v);o.value=String(i);select.appendChild(o);});}
var f={system:root.querySelector("#f-system"),setting:root.querySelector("#f-setting"),
 category:root.querySelector("#f-category"),language:root.querySelector("#f-language"),
 score:root.querySelector("#f-score"),text:root.querySelector("#f-text")};
var body=root.querySelector("tbody"),count=root.querySelector(".count"),
 more=root.querySelector(".more");
function want(it){
 if(f.system.value!==""&&it.sy!==+f.system.value){return false;}
 if(f.setting.value!==""&&it.se!==+f.setting.value){return false;}
 if(f.category.value!==""&&it.ca!==+f.category.value){return false;}
 if(f.language.value!==""&&it.la!==+f.language.value){return false;}
 var s=f.score.value;
 if(s==="right"&&it.em!==1){return false;}if(s==="wrong"&&it.em!==0){return false;}
 if(s==="none"&&it.em!==null){return false;}
 var t=f.text.value.trim().toLowerCase();
 if(t){var q=data.queries[it.q];var hay=(q.id+" "+q.text+" "+(it.r||"")).toLowerCase();
  if(hay.indexOf(t)<0){return false;}}
 return true;}
function render(){
 matches=data.items.filter(want);body.textContent="";
 matches.slice(0,shown).forEach(function(it){body.appendChild(row(it));});
 count.textContent=matches.length+" of "+data.items.length+" items shown by the filters"+
  (matches.length>shown?" (first "+shown+" listed)":"");
 more.hidden=matches.length<=shown;}
function row(it){
 var q=data.queries[it.q],tr=el("tr",null,"item");tr.tabIndex=0;
 tr.appendChild(el("td",data.systems[it.sy]));tr.appendChild(el("td",data.settings[it.se]));
 tr.appendChild(el("td",q.id));tr.appendChild(el("td",data.languages[it.la]));
 tr.appendChild(el("td",it.ca===null?"\u2013":data.category_names[it.ca]));
 tr.appendChild(el("td",it.em===null?"\u2013":(it.em?"right":"wrong"),"num"));
 tr.appendChild(el("td",it.er?"error: "+it.er:(it.r||""),"resp"));
 function toggle(){var next=tr.nextSibling;
  if(next&&next.className==="open"){body.removeChild(next);tr.setAttribute("aria-expanded","false");return;}
  var d=el("tr",null,"open"),td=el("td");td.colSpan=7;td.appendChild(detail(it));
  d.appendChild(td);body.insertBefore(d,tr.nextSibling);tr.setAttribute("aria-expanded","true");}
 tr.addEventListener("click",toggle);
 tr.addEventListener("keydown",function(e){
  if(e.key==="Enter"||e.key===" "){e.preventDefault();toggle();}
  else if(e.key==="ArrowDown"||e.key==="j"){e.preventDefault();step(tr,1);}
  else if(e.key==="ArrowUp"||e.key==="k"){e.preventDefault();step(tr,-1);}});
 return tr;}
function step(tr,way){var n=way>0?tr.nextSibling:tr.previousSibling;
 while(n&&n.className!=="item"){n=way>0?n.nextSibling:n.previousSibling;}if(n){n.focus();}}
function detail(it){
 var q=data.queries[it.q],box=el("div",null,"detail");
 box.appendChild(el("h3","Query "+q.id+" ("+data.languages[it.la]+", "+q.source+")"));
 box.appendChild(el("pre",q.text));
 box.appendChild(el("h3","Gold answers"));var ul=el("ul");
 q.answers.forEach(function(a){ul.appendChild(el("li",a));});box.appendChild(ul);
 box.appendChild(el("h3","Pool (oracle marked; in this item's context: \u25b8)"));
 var ol=el("ol"),ctx={};(it.cx||[]).forEach(function(c){ctx[c]=1;});
 q.pool.forEach(function(c){var li=el("li");
  if(ctx[c[0]]){li.appendChild(el("span","\u25b8 in context","tag"));}
  if(c[3]){li.appendChild(el("span","oracle","tag oracle"));}
  if(c[4]){li.appendChild(el("span","supporting","tag"));}
  li.appendChild(el("strong",(c[2]||c[1])+": "));li.appendChild(el("span",c[5]));
  ol.appendChild(li);});box.appendChild(ol);
 box.appendChild(el("h3","Prompt sent (exact)"));box.appendChild(el("pre",it.pr===null?"(none)":it.pr));
 box.appendChild(el("h3","Response"));box.appendChild(el("pre",it.er?"error: "+it.er:(it.r===null?"(none)":it.r)));
 var t=el("table"),head=el("tr");["metric","value","why"].forEach(function(h){head.appendChild(el("th",h));});
 t.appendChild(head);(it.sc||[]).forEach(function(s){var r=el("tr");r.appendChild(el("td",s[0]));
  r.appendChild(el("td",s[1]===null?"\u2013":pct(s[1]),"num"));r.appendChild(el("td",s[2]||""));
  t.appendChild(r);});
 box.appendChild(el("h3","Scores (%)"));box.appendChild(t);
 if(it.pa){box.appendChild(el("p","Pattern "+it.pa+" (base, oracle, "+data.settings[it.mx]+")","note"));}
 return box;}
document.addEventListener("keydown",function(e){
 var t=e.target.tagName;
 if(e.key==="/"&&t!=="INPUT"&&t!=="SELECT"&&t!=="TEXTAREA"){e.preventDefault();f.text.focus();}});
unpack(holder.textContent.trim()).then(function(d){
 data=d;fill(f.system,d.systems);fill(f.setting,d.settings);
 fill(f.category,d.categories,d.category_names);fill(f.language,d.languages);
 Object.keys(f).forEach(function(k){f[k].addEventListener(k==="text"?"input":"change",
  function(){shown=PAGE;render();});});
 more.addEventListener("click",function(){shown+=PAGE;render();});
 root.querySelector(".loading").hidden=true;render();
 document.body.setAttribute("data-items-ready",String(d.items.length));
}).catch(function(err){root.querySelector(".loading").textContent=
 "The item data could not be read in this browser ("+err+").";});
})();
"""

_RESPONSE_LINE = ('box.appendChild(el("h3","Response"));box.appendChild(el("pre",it.er?'
                  '"error: "+it.er:(it.r===null?"(none)":it.r)));')
REASONING_SCRIPT = SCRIPT.replace(_RESPONSE_LINE, _RESPONSE_LINE + (
    '\n if(it.rs!==undefined){var th=el("details");th.appendChild(el("summary","Reasoning ("'
    '+it.rt+" tokens"+(it.tc?"; cut while thinking: no answer came":"")+"; never scored)"));'
    'th.appendChild(el("pre",it.rs||"(not shown by the server)"));box.appendChild(th);}'))
"""The script of a page whose items hold a reasoning model's thinking: each item shows it
folded under its response, with its token count (a page without any keeps :data:`SCRIPT`)."""
assert REASONING_SCRIPT != SCRIPT, "the item browser's response line moved"
