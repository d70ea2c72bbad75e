// Veredicto web console: plain JavaScript, no build step. It calls the
// project's HTTP API as any client does and follows each execution on its
// event stream (one EventSource). It never writes to the browser's console:
// reports and previews quote personal documents.
//
// Every code a person reads (a decision, a reason, a status, a state) is
// shown through the label table labels.js brings, generated from the one
// table in Go (internal/labels): the page keeps no words of its own for
// codes.
(function () {
  'use strict';

  var cfg = Object.assign({ api: '', events: '/api/events' }, window.VEREDICTO_CONFIG || {});
  var LABELS = window.VEREDICTO_LABELS || {};
  var PREVIEW = Object.assign({ order: [], values: {} }, window.VEREDICTO_PREVIEW || {});
  var TOKEN_KEY = 'veredicto.token';
  var token = sessionStorage.getItem(TOKEN_KEY) || '';
  var main = document.getElementById('main');
  var cleanup = []; // run when the page changes: timers, streams
  var MAX_TIMELINE = 500; // execution-level steps kept on the page
  var STREAM_RETRIES = 10; // a closed stream of a running run is reopened at most this many times in a row
  var STATUSES = ['RUNNING', 'SUCCEEDED', 'FAILED', 'TIMED_OUT', 'ABORTED', 'PENDING'];
  // The search's Task states shown as stages (its Choice and Pass states
  // route; their outcome is shown by OUTCOME).
  var SEARCH_TASKS = ['Validate', 'Gem5', 'Gem1', 'Gem2', 'Gem3', 'Gem4', 'Correction', 'Report', 'ReportReviewed', 'Summary', 'LookupReview', 'AskReview'];

  // ---------------------------------------------------------------- helpers

  // L is a code's label in its domain (labels.Of): a code the table lacks
  // reads as itself with its underscores spaced, never as nothing.
  function L(domain, code) {
    var d = LABELS[domain] || {};
    if (code === undefined || code === null || code === '') return '';
    return Object.prototype.hasOwnProperty.call(d, code) ? d[code] : String(code).replace(/_/g, ' ');
  }
  function has(domain, code) { return Object.prototype.hasOwnProperty.call(LABELS[domain] || {}, code); }
  // phrase is L for the middle of a sentence (labels.Phrase).
  function phrase(domain, code) {
    var l = L(domain, code);
    if (l.length > 1 && l[0] !== l[0].toLowerCase() && l[1] === l[1].toLowerCase() && !/[0-9]/.test(l[1])) return l[0].toLowerCase() + l.slice(1);
    return l;
  }
  // count is n with the noun that agrees with it (labels.Count).
  function count(n, one, many) { return n === 1 ? '1 ' + one : n + ' ' + many; }

  // el builds an element; strings and numbers become text nodes, never HTML.
  function el(tag, attrs) {
    var node = document.createElement(tag);
    if (attrs) {
      Object.keys(attrs).forEach(function (k) {
        var v = attrs[k];
        if (v === undefined || v === null || v === false) return;
        if (k === 'text') node.textContent = String(v);
        else if (k === 'class') node.className = v;
        else if (k.slice(0, 2) === 'on') node.addEventListener(k.slice(2), v);
        else node.setAttribute(k, v === true ? '' : String(v));
      });
    }
    (function add(list) {
      for (var i = 0; i < list.length; i++) {
        var c = list[i];
        if (c === undefined || c === null || c === false) continue;
        if (Array.isArray(c)) add(c);
        else node.appendChild(typeof c === 'object' ? c : document.createTextNode(String(c)));
      }
    })(Array.prototype.slice.call(arguments, 2));
    return node;
  }
  function $(id) { return document.getElementById(id); }
  function enc(s) { return encodeURIComponent(s); }
  function statusText(s) { return s ? L('run_status', s) : '—'; }
  function decisionText(d) { return L('decision', d); }
  function when(iso) {
    if (!iso || /^0001-/.test(iso)) return '—';
    var d = new Date(iso);
    return isNaN(d) ? iso : d.toLocaleString('es-CL', { dateStyle: 'short', timeStyle: 'medium' });
  }
  function duration(sec) {
    if (!(sec >= 0)) return '—';
    sec = Math.round(sec);
    if (sec < 60) return sec + ' s';
    var m = Math.floor(sec / 60);
    if (m < 60) return m + ' min ' + (sec % 60) + ' s';
    return Math.floor(m / 60) + ' h ' + (m % 60) + ' min';
  }
  function number(n) { return Number(n || 0).toLocaleString('es-CL'); }
  function money(usd) { return 'US$' + Number(usd || 0).toLocaleString('es-CL', { minimumFractionDigits: 4, maximumFractionDigits: 4 }); }
  function notify(msg) {
    var n = $('notice');
    n.textContent = msg;
    n.hidden = !msg;
  }
  function tenantOf(tok) {
    try {
      var p = JSON.parse(atob(tok.split('.')[1].replace(/-/g, '+').replace(/_/g, '/')));
      return { tenant: p['custom:tenant'] || '', sub: p.sub || '', exp: p.exp };
    } catch (e) { return null; }
  }
  function tenant() { return (tenantOf(token) || {}).tenant || ''; }

  function APIError(status, message) { this.status = status; this.message = message; }

  // api calls the HTTP API with the token; a 401 signs out.
  function api(method, path, body, accept) {
    var headers = { Authorization: 'Bearer ' + token };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    if (accept) headers.Accept = accept;
    return fetch(cfg.api + path, { method: method, headers: headers, body: body === undefined ? undefined : JSON.stringify(body) })
      .then(function (r) {
        var ct = r.headers.get('Content-Type') || '';
        var read = ct.indexOf('json') >= 0 ? r.json() : r.text();
        return read.then(function (data) {
          if (r.status === 401) {
            signOut('El token no es válido o expiró: pegue uno nuevo.');
          }
          if (!r.ok) throw new APIError(r.status, (data && data.error) || ('HTTP ' + r.status));
          return data;
        });
      });
  }
  // fail shows why a page could not load, and what to do; notFound says
  // what a 404 means there.
  function fail(where, notFound) {
    return function (err) {
      if (err && err.status === 401) return;
      var msg = err && err.status === 404 ? (notFound || 'No encontrado: puede que aún no exista o que sea de otra organización.') :
        'No se pudo cargar: ' + ((err && err.message) || 'error de red') + '. Vuelva a intentarlo en un momento.';
      where.replaceChildren(el('p', { class: 'error empty', role: 'alert', text: msg }));
    };
  }

  // ---------------------------------------------------------------- sign-in

  function signOut(msg) {
    token = '';
    sessionStorage.removeItem(TOKEN_KEY);
    $('nav').hidden = true;
    location.hash = '#/';
    route();
    if (msg) notify(msg);
  }

  function signInPage() {
    var area = el('textarea', { id: 'token', rows: 5, required: true, autocomplete: 'off', spellcheck: 'false', 'aria-describedby': 'token-help' });
    var err = el('p', { class: 'error', role: 'alert', hidden: true });
    var form = el('form', { class: 'card signin', onsubmit: function (ev) {
      ev.preventDefault();
      var t = area.value.trim();
      if (!tenantOf(t)) {
        err.textContent = 'Eso no parece un token (JWT de tres partes).';
        err.hidden = false;
        return;
      }
      token = t;
      api('GET', '/api/confirmations').then(function () {
        sessionStorage.setItem(TOKEN_KEY, token);
        notify('');
        route();
      }, function (e) {
        token = '';
        err.textContent = e.status === 401 ? 'El servidor rechazó el token.' : 'No se pudo verificar el token: ' + e.message;
        err.hidden = false;
      });
    } },
    el('h1', { text: 'Entrar' }),
    el('label', { for: 'token', text: 'Token de acceso' }),
    area,
    el('p', { id: 'token-help', class: 'muted' }, 'Pegue el token que imprime ', el('code', { text: 'veredicto token --tenant T' }),
      ' o el token de su proveedor de identidad. Se guarda sólo en esta pestaña.'),
    err,
    el('button', { type: 'submit', class: 'primary', id: 'signin-submit', text: 'Entrar' }));
    main.replaceChildren(form);
    area.focus();
  }

  // ---------------------------------------------------------------- runs

  function runHref(r) {
    return '#/ejecucion/' + enc(r.kind) + '/' + enc(r.id) + '/' + enc(r.execution);
  }

  function runsPage() {
    var filter = el('select', { id: 'status-filter' }, el('option', { value: '', text: 'Todas' }));
    STATUSES.forEach(function (s) { filter.appendChild(el('option', { value: s, text: statusText(s) })); });
    var body = el('tbody', { id: 'runs-body' });
    var table = el('table', { id: 'runs-table', class: 'runs' },
      el('thead', null, el('tr', null, el('th', { text: 'Tipo', class: 'hide-narrow' }), el('th', { text: 'Ejecución' }), el('th', { text: 'Estado' }),
        el('th', { text: 'Inicio', class: 'hide-narrow' }), el('th', { text: 'Duración' }), el('th', { text: 'Decisiones' }))),
      body);
    var status = el('div', { id: 'runs-status', class: 'muted', 'aria-live': 'polite' });
    var idInput = el('input', { id: 'new-search-id', required: true, pattern: '[A-Za-z0-9][A-Za-z0-9._-]{0,63}', placeholder: 'demo-cfo-andina', autocomplete: 'off' });
    var review = el('input', { id: 'new-search-review', type: 'checkbox', checked: true });
    var startErr = el('p', { class: 'error', role: 'alert', hidden: true });
    var start = el('form', { class: 'card', id: 'start-form', onsubmit: function (ev) {
      ev.preventDefault();
      startErr.hidden = true;
      var req = { search_id: idInput.value.trim() };
      if (review.checked) req.review = { wait: true, timeout_seconds: 86400 };
      api('POST', '/searches', req).then(function (st) {
        notify(st.started ? 'Búsqueda ' + st.search_id + ' iniciada.' : 'La búsqueda ' + st.search_id + ' ya estaba iniciada.');
        location.hash = runHref({ kind: 'search', id: st.search_id, execution: st.execution });
      }, function (e) {
        if (e.status === 401) return;
        startErr.textContent = e.status === 404 ?
          'No hay una búsqueda «' + req.search_id + '» subida para la organización «' + tenant() + '»: súbala a searches/' + tenant() + '/' + req.search_id + '/ (con jd.md y kickoff.md) y vuelva a intentarlo.' : e.message;
        startErr.hidden = false;
      });
    } },
    el('h2', { text: 'Iniciar una búsqueda subida' }),
    el('div', { class: 'toolbar' },
      el('label', null, 'Identificador de la búsqueda', idInput),
      el('label', { class: 'check' }, el('span', null, review, ' Esperar la revisión del consultor senior')),
      el('button', { type: 'submit', class: 'primary', text: 'Iniciar búsqueda' })),
    startErr);
    var runs = [];
    var loaded = false;
    function earlier(r) {
      var list = r.reruns || [];
      if (!list.length) return null;
      return el('details', { class: 'reruns' },
        el('summary', { text: count(list.length, 'ejecución anterior', 'ejecuciones anteriores') }),
        el('ul', { class: 'plain' }, list.map(function (e) {
          return el('li', null, el('a', { href: runHref({ kind: r.kind, id: r.id, execution: e.execution }), text: when(e.started_at) }),
            ' · ', el('span', { class: 'status s-' + e.status, text: statusText(e.status) }));
        })));
    }
    function paint() {
      var want = filter.value;
      var rows = runs.filter(function (r) { return !want || r.status === want; });
      body.replaceChildren.apply(body, rows.map(function (r) {
        var decisions = Object.keys(r.decisions || {}).sort().map(function (d) {
          return el('span', { class: 'chip decision d-' + d, 'data-decision': d, text: decisionText(d) + ': ' + r.decisions[d] });
        });
        return el('tr', { 'data-status': r.status, 'data-id': r.id, 'data-reruns': (r.reruns || []).length },
          el('td', { class: 'hide-narrow kind', text: L('run_kind', r.kind) }),
          el('td', { class: 'run-name' }, el('a', { href: runHref(r), text: r.id }), earlier(r)),
          el('td', { class: 'status s-' + r.status, text: statusText(r.status) }),
          el('td', { class: 'hide-narrow', text: when(r.started_at) }),
          el('td', { class: 'duration', text: r.started_at ? duration(r.duration_seconds) : '—' }),
          el('td', { class: 'decisions' }, el('div', { class: 'chips' }, decisions.length ? decisions :
            el('span', { class: 'muted', text: r.candidates ? count(r.candidates, 'candidato en evaluación', 'candidatos en evaluación') : '—' }))));
      }));
      if (rows.length) {
        status.replaceChildren(rows.length === runs.length ? count(runs.length, 'ejecución', 'ejecuciones') : rows.length + ' de ' + count(runs.length, 'ejecución', 'ejecuciones'));
      } else if (runs.length) {
        status.replaceChildren(el('p', { class: 'empty', id: 'runs-empty', text: 'Ninguna ejecución está «' + statusText(want) + '». Elija «Todas» en el filtro para ver las ' + count(runs.length, 'ejecución', 'ejecuciones') + '.' }));
      } else if (loaded) {
        status.replaceChildren(el('div', { class: 'empty card', id: 'runs-empty' },
          el('p', null, el('strong', { text: 'Todavía no hay ejecuciones de la organización «' + tenant() + '».' })),
          el('p', { text: 'Para empezar, suba una búsqueda a la carpeta searches/' + tenant() + '/<identificador>/ (con jd.md, kickoff.md y una carpeta por candidato) e iníciela arriba con su identificador; o escriba en Conversación «Lanza la evaluación de la búsqueda …».' }),
          el('p', { class: 'muted', text: 'Si esperaba ver ejecuciones aquí, compruebe que el token sea de la organización en la que se subieron: este token es de «' + tenant() + '».' })));
      }
    }
    filter.addEventListener('change', paint);
    function load() {
      return api('GET', '/runs').then(function (d) { runs = d.runs || []; loaded = true; paint(); }, fail(status));
    }
    var timer = setInterval(function () {
      if (runs.some(function (r) { return r.status === 'RUNNING' || r.status === 'PENDING'; })) load();
    }, 4000);
    cleanup.push(function () { clearInterval(timer); });
    main.replaceChildren(el('h1', { text: 'Ejecuciones' }), start,
      el('div', { class: 'toolbar' }, el('label', null, 'Filtrar por estado', filter)),
      el('div', { class: 'scroll' }, table), status);
    load();
  }

  // ---------------------------------------------------------------- a run

  // States that say where a candidate went: [chip class, gate passed].
  var OUTCOME = {
    DiscardedGem1: ['gate-out', false], DiscardedGem2: ['gate-out', false], DiscardedGem3: ['gate-out', false],
    Approved: ['gate-in', true], Gem3Reask: ['retry', false], NextQAAttempt: ['qa', false],
    EscalatedAmbiguous: ['qa', false], EscalatedContradiction: ['qa', false], EscalatedNoEvidence: ['qa', false],
    EscalatedQABlocks: ['qa', false], TechnicalError: ['failed', false],
    ReviewApproved: ['gate-in', true], ReviewRejected: ['gate-out', false], ApprovedEarlier: ['gate-in', true],
    RejectedEarlier: ['gate-out', false], ReviewExpired: ['failed', false], ReviewPending: ['qa', false], ReviewUnavailable: ['failed', false]
  };
  // stateLabel names a state for people: its label, else (a machine a
  // user created) its own name.
  function stateLabel(state, agent) {
    if (has('state', state)) return L('state', state);
    if (!state && agent === 'execution') return 'Ejecución';
    return state || agent || '';
  }

  // Rosters of searches, read once per search: the candidates' ids and
  // names in the order the workflow evaluates them, and their documents.
  var rosters = {};
  function roster(search) {
    if (!rosters[search]) {
      rosters[search] = api('GET', '/searches/' + enc(search) + '/candidates').then(function (r) { return r; }, function () {
        delete rosters[search]; // asked again later (the search may not be started yet)
        return null;
      });
    }
    return rosters[search];
  }
  function candidateName(ro, cid) {
    var c = ro && (ro.candidates || []).filter(function (x) { return x.candidate_id === cid; })[0];
    return c && c.name ? cid + ' · ' + c.name : cid;
  }

  function runPage(kind, id, execution) {
    var isSearch = kind === 'search';
    var statusEl = el('span', { id: 'run-status', class: 'status s-PENDING', text: statusText('PENDING') });
    var counter = el('span', { id: 'run-events', class: 'counter', 'data-count': '0', text: '0 eventos' });
    var rowsBody = el('tbody', { id: 'candidates-body' });
    var waiting = el('p', { id: 'candidates-empty', class: 'muted empty', text: isSearch ?
      'Esperando el primer evento de la ejecución: cada candidato aparece aquí, con su nombre, en cuanto empieza su evaluación.' :
      'Esperando el primer evento de la ejecución.' });
    var candidates = el('section', { class: 'card', id: 'candidates-card' },
      el('h2', { text: isSearch ? 'Candidatos' : 'Iteraciones' }),
      waiting,
      el('div', { class: 'scroll' }, el('table', { id: 'candidates' },
        el('thead', null, el('tr', null, el('th', { text: isSearch ? 'Candidato' : 'Elemento' }), el('th', { text: 'Etapas' }),
          el('th', { text: isSearch ? 'Decisión' : 'Resultado' }))),
        rowsBody)));
    var timeline = el('ul', { id: 'timeline', class: 'chips plain' });
    var summary = el('section', { id: 'summary', class: 'card', hidden: true });
    var subtitle = el('p', { id: 'run-subtitle', class: 'muted', hidden: true });
    // n of N, elapsed, ETA, tokens and cost so far (searches).
    var progressCount = el('span', { id: 'run-count' });
    var progressElapsed = el('span', { id: 'run-elapsed' });
    var progressETA = el('span', { id: 'run-eta' });
    var progressCost = el('span', { id: 'run-cost' });
    var progress = el('p', { id: 'run-progress', class: 'progress', hidden: !isSearch, 'aria-live': 'polite' },
      progressCount, ' · ', progressElapsed, ' · ', progressETA, ' · ', progressCost);
    main.replaceChildren(
      el('p', null, el('a', { href: '#/', text: '← Ejecuciones' })),
      el('h1', null, L('run_kind', kind) + ' ' + id),
      subtitle,
      el('p', null, 'Estado: ', statusEl, ' · ', counter),
      progress,
      summary, candidates,
      el('section', { class: 'card' }, el('h2', { text: 'Pasos de la ejecución' }), timeline));

    var rows = {}; // by map item index
    var count_ = 0;
    var names = null; // the search's roster
    var startedAt = null; // Date the execution started
    var stoppedAt = null;
    var usage = null;
    var finished = false;
    function total() {
      if (names && names.candidates && names.candidates.length) return names.candidates.length;
      return Object.keys(rows).length;
    }
    function paintProgress() {
      if (!isSearch) return;
      var N = total();
      var n = Object.keys(rows).filter(function (k) { return rows[k].tr.hasAttribute('data-decision'); }).length;
      progressCount.textContent = N ? n + ' de ' + N + ' evaluados' : 'Preparando la evaluación';
      progressCount.setAttribute('data-done', String(n));
      progressCount.setAttribute('data-total', String(N));
      var end = stoppedAt || new Date();
      var elapsed = startedAt ? (end - startedAt) / 1000 : null;
      progressElapsed.textContent = 'Tiempo transcurrido: ' + (elapsed === null ? '—' : duration(elapsed));
      if (finished || (N && n >= N)) {
        progressETA.textContent = finished ? 'Terminada' : 'Todos evaluados: falta el resumen o una decisión pendiente';
      } else if (!n || elapsed === null) {
        progressETA.textContent = 'Tiempo restante: se calcula con el primer candidato evaluado';
      } else {
        progressETA.textContent = 'Tiempo restante: unos ' + duration(elapsed / n * (N - n));
      }
      progressETA.setAttribute('data-eta', String(!finished && n && elapsed !== null && n < N ? Math.round(elapsed / n * (N - n)) : ''));
      if (usage) {
        progressCost.textContent = number((usage.prompt_tokens || 0) + (usage.completion_tokens || 0)) + ' tokens · ' + (usage.cost_usd ? money(usage.cost_usd) : 'sin costo') + ' hasta ahora';
      } else {
        progressCost.textContent = 'Costo: aún sin llamadas al modelo';
      }
    }
    // The search's state: when it started, tokens and cost so far.
    function loadState() {
      if (!isSearch) return Promise.resolve();
      return api('GET', '/searches/' + enc(id)).then(function (st) {
        if (st.execution && execution.indexOf(st.execution) < 0 && st.execution.indexOf(execution) < 0) {
          // an earlier run of the search: its figures are not the latest's
          usage = null;
          return;
        }
        if (st.started_at) startedAt = new Date(st.started_at);
        if (st.stopped_at) stoppedAt = new Date(st.stopped_at);
        usage = st.usage || null;
        paintProgress();
      }, function () { /* not started yet: the stream says when */ });
    }
    function nameRow(r, idx) {
      var c = names && names.candidates && names.candidates[Number(idx)];
      if (c && !r.tr.hasAttribute('data-candidate')) {
        r.name.textContent = candidateName(names, c.candidate_id);
        r.tr.setAttribute('data-candidate', c.candidate_id);
      }
    }
    if (isSearch) {
      roster(id).then(function (ro) {
        if (!ro) return;
        names = ro;
        var sub = [ro.role, ro.client].filter(Boolean).join(' · ');
        if (sub) { subtitle.textContent = sub; subtitle.hidden = false; }
        Object.keys(rows).forEach(function (k) { nameRow(rows[k], k); });
        paintProgress();
      });
      loadState();
      var tick = setInterval(function () { if (!finished) paintProgress(); }, 1000);
      var poll = setInterval(function () { if (!finished) loadState(); }, 5000);
      cleanup.push(function () { clearInterval(tick); clearInterval(poll); });
      paintProgress();
    }

    function row(idx) {
      var r = rows[idx];
      if (r) return r;
      var name = el('td', { class: 'cand', text: (isSearch ? 'Candidato ' : 'Elemento ') + (Number(idx) + 1) });
      var chips = el('div', { class: 'chips' });
      var decision = el('td', { class: 'decision' });
      var tr = el('tr', { 'data-item': idx }, name, el('td', null, chips), decision);
      waiting.hidden = true;
      // Keep rows in item order.
      var next = null;
      Object.keys(rows).forEach(function (k) {
        if (Number(k) > Number(idx) && (!next || Number(k) < Number(next.getAttribute('data-item')))) next = rows[k].tr;
      });
      rowsBody.insertBefore(tr, next);
      r = rows[idx] = { tr: tr, name: name, chips: chips, decision: decision, running: {}, runs: {}, gate: null };
      nameRow(r, idx);
      paintProgress();
      return r;
    }
    function chip(box, cls, text, state) {
      var c = el('span', { class: 'chip ' + cls, 'data-state': state || '', text: text });
      box.appendChild(c);
      return c;
    }
    function setDecision(r, d, cid) {
      r.decision.replaceChildren();
      r.decision.className = 'decision d-' + d;
      r.tr.setAttribute('data-decision', d);
      if (cid && isSearch) {
        r.decision.appendChild(el('a', { href: '#/informe/' + enc(id) + '/' + enc(cid), text: decisionText(d) }));
      } else {
        r.decision.textContent = decisionText(d);
      }
      paintProgress();
    }
    function onStep(st) {
      var m = st.metadata || {};
      var scope = /item\[(\d+)\]/.exec(m.scope || '');
      if (!scope && st.action && st.action.indexOf('iteration-') === 0 && m.index !== undefined) {
        row(m.index); // a candidate entered the Map
        return;
      }
      if (!scope) {
        var label = stateLabel(m.state, st.agent) + ' · ' + actionText(st);
        timeline.appendChild(el('li', { class: 'chip ' + chipClass(st.action), text: label }));
        while (timeline.childNodes.length > MAX_TIMELINE) timeline.removeChild(timeline.firstChild);
        return;
      }
      var r = row(scope[1]);
      if (m.candidate_id && r.tr.getAttribute('data-candidate') !== m.candidate_id) {
        r.name.textContent = candidateName(names, m.candidate_id);
        r.tr.setAttribute('data-candidate', m.candidate_id);
      }
      var state = m.state || st.agent;
      // A gate's outcome is the state it routes to.
      if (r.gate && st.action === 'started') {
        var passed = OUTCOME[state] ? OUTCOME[state][1] : true;
        r.gate.className = 'chip ' + (passed ? 'gate-in' : 'gate-out');
        r.gate.textContent = stateLabel(r.gate.getAttribute('data-state')) + (passed ? ' superado' : ' no superado');
        r.gate = null;
      }
      if (m.decision && m.candidate_id) setDecision(r, m.decision, m.candidate_id);
      if (OUTCOME[state] && st.action === 'started') {
        chip(r.chips, OUTCOME[state][0], stateLabel(state), state);
        if (/^Escalated/.test(state)) setDecision(r, 'ESCALADO_CONSULTOR_SENIOR');
        return;
      }
      if (/Gate$/.test(state) || /^Gate\d/.test(state)) {
        if (st.action === 'finished') r.gate = chip(r.chips, '', stateLabel(state), state);
        return;
      }
      // Searches show their agents; other workflows every state.
      var label = isSearch ? (SEARCH_TASKS.indexOf(state) >= 0 || /Function$/.test(st.agent || '') ? stateLabel(state, st.agent) : '') : stateLabel(state, st.agent);
      if (!label) return; // a search's routing states: nothing to show
      var c = r.running[state];
      switch (st.action) {
      case 'started':
        r.runs[state] = (r.runs[state] || 0) + 1;
        if (r.runs[state] > 1) label += ' #' + r.runs[state];
        r.running[state] = chip(r.chips, state === 'Correction' ? 'qa running' : 'running', label + ' …', state);
        break;
      case 'retried':
        chip(r.chips, 'retry', label + ' reintento ' + (m.attempt || ''), state);
        break;
      case 'finished':
        if (c) {
          c.className = 'chip done';
          c.textContent = c.textContent.replace(/ …$/, '') + ' ✓' + (m.score !== undefined ? ' ' + m.score : '');
          delete r.running[state];
        }
        break;
      case 'failed':
      case 'timed-out':
        if (c) {
          c.className = 'chip failed';
          c.textContent = c.textContent.replace(/ …$/, '') + ' ✗' + (m.error ? ' ' + m.error : '');
          delete r.running[state];
        } else {
          chip(r.chips, 'failed', label + ' ✗' + (m.error ? ' ' + m.error : ''), state);
        }
        break;
      }
    }
    function setStatus(s) {
      statusEl.className = 'status s-' + s;
      statusEl.textContent = statusText(s);
    }
    function loadSummary() {
      if (!isSearch) return;
      api('GET', '/searches/' + enc(id) + '/summary').then(function (s) {
        var body = el('tbody');
        (s.ranking || []).forEach(function (c, i) {
          body.appendChild(el('tr', { 'data-candidate': c.candidate_id },
            el('td', { text: i + 1 }),
            el('td', null, el('a', { href: '#/informe/' + enc(id) + '/' + enc(c.candidate_id), text: candidateName(names, c.candidate_id) })),
            el('td', { class: 'decision d-' + c.decision, text: decisionText(c.decision) }),
            el('td', { class: 'hide-narrow', text: L('reason', c.reason) })));
        });
        summary.replaceChildren(el('h2', { text: 'Resumen y ranking' }),
          el('p', null, el('a', { href: '#/resumen/' + enc(id), text: 'Leer el resumen completo' })),
          el('div', { class: 'scroll' }, el('table', { id: 'ranking' },
            el('thead', null, el('tr', null, el('th', { text: '#' }), el('th', { text: 'Candidato' }), el('th', { text: 'Decisión' }), el('th', { text: 'Motivo', class: 'hide-narrow' }))),
            body)));
        summary.hidden = false;
      }, function () { /* no summary yet (failed run): the stages say why */ });
    }
    setStatus('RUNNING');
    var lastId = '';
    var retries = 0;
    var reopened = 0; // every reopening, in data-reopened (the tests wait on it)
    var es = null;
    var retryTimer = null;
    cleanup.push(function () { if (es) es.close(); clearTimeout(retryTimer); });
    // A stream that closes while the run is still running (a 404 before
    // the execution's first event, a restarted server) is opened again from
    // the last event seen, a bounded number of times.
    function connect() {
      var url = cfg.events + (cfg.events.indexOf('?') >= 0 ? '&' : '?') + 'execution=' + enc(execution) + '&access_token=' + enc(token) +
        (lastId ? '&lastEventId=' + enc(lastId) : '');
      es = new EventSource(url);
      es.onmessage = onMessage;
      es.onerror = onError;
    }
    function onError() {
      // EventSource reconnects by itself with Last-Event-ID; a closed
      // stream (204 after finish, 404) stays closed.
      if (es.readyState !== EventSource.CLOSED || statusEl.textContent !== statusText('RUNNING')) return;
      if (retries < STREAM_RETRIES) {
        retries++;
        counter.setAttribute('data-reopened', String(++reopened));
        retryTimer = setTimeout(connect, Math.min(500 * retries, 5000));
        return;
      }
      notify('Se perdió la conexión con el flujo de eventos de ' + id + '. Recargue la página para seguirla.');
    }
    function onMessage(ev) {
      retries = 0;
      if (ev.lastEventId) lastId = ev.lastEventId;
      var data;
      try { data = JSON.parse(ev.data); } catch (e) { return; }
      count_++;
      if (!startedAt) startedAt = new Date(); // until the state says when it started
      counter.setAttribute('data-count', String(count_));
      counter.setAttribute('data-last-id', ev.lastEventId || '');
      counter.textContent = count(count_, 'evento', 'eventos');
      switch (data.type) {
      case 'execution-step':
        onStep(data.step || {});
        break;
      case 'pending-confirmation':
      case 'confirmation-resolved':
        onConfirmationEvent(data);
        break;
      case 'error':
        // A line of the event log could not be read: it was set aside and
        // the stream goes on with the next events.
        notify('Un evento de esta ejecución (n.º ' + (data.id || ev.lastEventId || '?') + ') está dañado y no se puede mostrar; la ejecución sigue. Avise al operador.');
        break;
      case 'finish':
        setStatus(data.status || 'SUCCEEDED');
        finished = true;
        es.close();
        loadState().then(paintProgress);
        loadSummary();
        break;
      }
    }
    connect();
  }
  function actionText(st) {
    var m = st.metadata || {};
    var s = L('step_action', st.action);
    if (st.action === 'finished' && m.score !== undefined) s += ' (' + m.score + ')';
    if (st.action === 'retried' && m.attempt) s += ' (intento ' + m.attempt + ')';
    if ((st.action === 'failed' || st.action === 'timed-out') && m.error) s += ' (' + m.error + ')';
    return s;
  }
  function chipClass(action) {
    return { started: 'running', finished: 'done', succeeded: 'done', failed: 'failed', 'timed-out': 'failed', aborted: 'failed', retried: 'retry' }[action] || '';
  }

  // ---------------------------------------------------------------- documents

  function documentPage(title, back, path, notFound) {
    var box = el('div', { class: 'report', id: 'document' }, el('p', { class: 'muted', text: 'Cargando…' }));
    var decide = el('section', { id: 'report-decision', class: 'card decide', hidden: true });
    main.replaceChildren(el('p', null, back), el('h1', { class: 'sr-title', text: title }), decide, box);
    api('GET', path, undefined, 'text/html').then(function (html) {
      // The API renders Markdown with every character of the document
      // escaped (internal/markdown); only its own tags and links remain.
      box.innerHTML = html;
    }, fail(box, notFound));
    return decide;
  }
  // reportPage shows a candidate's report; a confirmation pending on that
  // candidate is decided here, beside the report, never in a modal over it.
  function reportPage(search, cid) {
    var decide = documentPage('Informe de ' + cid, el('a', { href: '#/', text: '← Volver', onclick: backToRun() }),
      '/searches/' + enc(search) + '/candidates/' + enc(cid) + '/report',
      'Este informe aún no existe: el candidato sigue en evaluación. Vuelva a la ejecución para seguir su avance.');
    reportPage.current = { search: search, cid: cid, box: decide };
    refreshBadge().then(paintReportDecision);
  }
  // about is the search and candidate a confirmation asks about, from its
  // preview.
  function about(c) {
    var p = c && c.preview && typeof c.preview === 'object' ? c.preview : {};
    return { search: p.search_id || '', cid: p.candidate_id || '' };
  }
  function pendingAbout(search, cid) {
    return pending.filter(function (c) { var a = about(c); return a.search === search && a.cid === cid; })[0];
  }
  function paintReportDecision() {
    var cur = reportPage.current;
    if (!cur || !document.body.contains(cur.box)) return;
    var c = pendingAbout(cur.search, cur.cid);
    if (!c) {
      if (cur.box.getAttribute('data-id') && !cur.box.hasAttribute('data-done')) { cur.box.hidden = true; cur.box.removeAttribute('data-id'); }
      return;
    }
    if (cur.box.getAttribute('data-id') === c.id) return;
    cur.box.setAttribute('data-id', c.id);
    cur.box.removeAttribute('data-done');
    var comment = el('textarea', { id: 'rd-comment', rows: 2, maxlength: 2000 });
    var err = el('p', { class: 'error', role: 'alert', hidden: true });
    function go(approved) {
      cur.box.querySelectorAll('button').forEach(function (b) { b.disabled = true; });
      decideConfirmation(c, approved, comment.value.trim()).then(function () {
        cur.box.setAttribute('data-done', approved ? 'approved' : 'rejected');
        cur.box.replaceChildren(el('p', { class: 'done', role: 'status', text: 'Decisión registrada: ' + (approved ? 'aprobada' : 'rechazada') + '. La ejecución la recibe y el informe se actualizará.' }));
      }, function (e) {
        cur.box.querySelectorAll('button').forEach(function (b) { b.disabled = false; });
        err.textContent = e.message;
        err.hidden = false;
      });
    }
    cur.box.replaceChildren(
      el('h2', { text: 'Decisión pendiente sobre este candidato' }),
      el('p', { class: 'question', text: L('question', c.toolName) || L('tool', c.toolName) }),
      el('p', { class: 'muted', text: 'Lea el informe de abajo antes de decidir. Sensibilidad ' + L('sensitivity', c.sensitivity) + '; ' +
        (c.undoable ? 'se puede deshacer' : 'no se puede deshacer') + '; vence ' + when(c.expires_at) + '.' }),
      el('label', { for: 'rd-comment', text: 'Comentario (opcional)' }), comment, err,
      el('div', { class: 'actions' },
        el('button', { type: 'button', id: 'rd-approve', class: 'primary', text: 'Aprobar', onclick: function () { go(true); } }),
        el('button', { type: 'button', id: 'rd-reject', class: 'danger', text: 'Rechazar', onclick: function () { go(false); } })));
    cur.box.hidden = false;
  }
  function summaryPage(search) {
    documentPage('Resumen de ' + search, el('a', { href: '#/', text: '← Ejecuciones' }), '/searches/' + enc(search) + '/summary',
      'El resumen aún no existe: se escribe cuando la búsqueda termina. Vuelva a la ejecución para seguir su avance.');
  }
  function backToRun() {
    return function (ev) { ev.preventDefault(); history.back(); };
  }
  function sourcePage(search, source) {
    var pre = el('pre', { class: 'source', id: 'source', tabindex: 0 }, 'Cargando…');
    main.replaceChildren(el('p', null, el('a', { href: '#/', text: '← Volver', onclick: backToRun() })),
      el('h1', null, 'Fuente: ', el('code', { text: source })), pre);
    api('GET', '/searches/' + enc(search) + '/sources/' + source.split('/').map(enc).join('/'), undefined, 'text/plain')
      .then(function (text) { pre.textContent = text; }, fail(pre, 'Este documento no está en la búsqueda (o no se subió): el informe lo declara «No informado en fuentes».'));
  }

  // ---------------------------------------------------------------- conversation

  // The delegation chat: each message is a turn (POST /api/chat); its
  // answer streams on the conversation's events. After each turn the page
  // asks «¿Faltó delegar?» (nothing was delegated) or «¿Era esto lo que
  // pedías?» (after a delegation): one click answers, with the agent it
  // should have gone to (POST /api/chat/feedback).
  var MAX_CHAT_ITEMS = 400; // transcript entries kept on the page
  var chatAgents = null; // GET /api/chat/agents, read once
  function loadAgents() {
    return chatAgents ? Promise.resolve(chatAgents) : api('GET', '/api/chat/agents').then(function (d) { chatAgents = d.agents || []; return chatAgents; });
  }
  // toolLabel names a chat tool for people: the specialist a delegation
  // goes to, else the label table's word for it.
  function toolLabel(name) {
    var a = (chatAgents || []).filter(function (x) { return 'delegate_to_' + x.id === name; })[0];
    if (a) return 'Delegación en ' + a.name;
    if (has('chat_tool', name)) return L('chat_tool', name);
    return has('tool', name) ? L('tool', name) : String(name || '').replace(/_/g, ' ');
  }
  function chatPage(chatId) {
    if (!chatId || !/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/.test(chatId)) {
      location.hash = '#/conversacion/web-' + Date.now();
      return;
    }
    var log = el('ol', { id: 'chat-log', class: 'chat-log', 'aria-live': 'polite' });
    var input = el('textarea', { id: 'chat-input', rows: 2, required: true, maxlength: 8000, autocomplete: 'off' });
    var err = el('p', { class: 'error', role: 'alert', hidden: true });
    var turns = {}; // turn number → its answer's element
    var empty = el('p', { id: 'chat-empty', class: 'muted empty', text: 'Escriba su primer mensaje. Por ejemplo: «Lanza la evaluación de la búsqueda demo-cfo-andina», «Compara a c-001 con c-006 en la búsqueda demo-cfo-andina» o «Envía el informe de c-001 de la búsqueda demo-cfo-andina a cliente@example.com» (pide confirmación antes de enviar).' });
    function item(node) {
      empty.hidden = true;
      log.appendChild(node);
      while (log.children.length > MAX_CHAT_ITEMS) log.removeChild(log.firstChild);
      node.scrollIntoView({ block: 'nearest' });
      return node;
    }
    function answerOf(n) {
      if (!turns[n]) turns[n] = item(el('li', { class: 'assistant', 'data-turn': n }, el('div', { class: 'text' })));
      return turns[n];
    }
    var form = el('form', { class: 'card', id: 'chat-form', onsubmit: function (ev) {
      ev.preventDefault();
      var msg = input.value.trim();
      if (!msg) return;
      err.hidden = true;
      api('POST', '/api/chat', { chat_id: chatId, message: msg }).then(function (a) {
        var mine = el('li', { class: 'user', 'data-turn': a.turn, text: msg });
        // The answer may have started streaming before this reply.
        if (turns[a.turn]) log.insertBefore(mine, turns[a.turn]);
        else item(mine);
        answerOf(a.turn);
        input.value = '';
      }, function (e) {
        if (e.status === 401) return;
        err.textContent = e.message;
        err.hidden = false;
      });
    } },
    el('label', { for: 'chat-input', text: 'Mensaje' }), input,
    el('div', { class: 'actions' }, el('button', { type: 'submit', class: 'primary', id: 'chat-send', text: 'Enviar' })), err);
    main.replaceChildren(el('h1', { text: 'Conversación' }), el('p', { class: 'muted', text: 'Conversación ' + chatId + '.' }), empty, log, form);
    loadAgents().catch(function () { /* tools are then named by the label table */ });
    input.focus();

    function feedback(n, question, delegated) {
      var box = el('div', { class: 'feedback', 'data-turn': n, 'data-question': question });
      var text = question === 'right' ? '¿Era esto lo que pedías?' : '¿Faltó delegar?';
      function send(answer, agent) {
        box.querySelectorAll('button').forEach(function (b) { b.disabled = true; });
        api('POST', '/api/chat/feedback', { chat_id: chatId, turn: n, answer: answer, agent: agent }).then(function () {
          box.replaceChildren(el('p', { class: 'muted done', text: 'Gracias: anotado.' }));
        }, function (e) {
          box.replaceChildren(el('p', { class: 'error', role: 'alert', text: e.status === 409 ? 'Este turno ya tenía respuesta.' : e.message }));
        });
      }
      function button(label, answer, agent) {
        return el('button', { type: 'button', 'data-answer': answer, 'data-agent': agent, text: label, onclick: function () { send(answer, agent); } });
      }
      loadAgents().then(function (agents) {
        var buttons = [];
        if (question === 'right') {
          buttons.push(button('Sí', 'yes', ''), button('No: a nadie', 'no', ''));
          agents.forEach(function (a) { if (a.id !== delegated) buttons.push(button('No: ' + a.name, 'no', a.id)); });
        } else {
          buttons.push(button('No', 'no', ''));
          agents.forEach(function (a) { buttons.push(button('Sí: ' + a.name, 'yes', a.id)); });
        }
        box.replaceChildren(el('p', { class: 'question', text: text }), el('div', { class: 'actions' }, buttons));
      }, function () { box.remove(); });
      return box;
    }

    var lastId = '';
    var es = null;
    cleanup.push(function () { if (es) es.close(); });
    function connect() {
      var url = cfg.events + (cfg.events.indexOf('?') >= 0 ? '&' : '?') + 'chat=' + enc(chatId) + '&access_token=' + enc(token) +
        (lastId ? '&lastEventId=' + enc(lastId) : '');
      es = new EventSource(url);
      es.onmessage = function (ev) {
        if (ev.lastEventId) lastId = ev.lastEventId;
        var data;
        try { data = JSON.parse(ev.data); } catch (e) { return; }
        var n = data.turn;
        switch (data.type) {
        case 'text-delta':
          answerOf(n).querySelector('.text').appendChild(document.createTextNode(data.delta || ''));
          break;
        case 'tool-invocation':
          var ti = data.toolInvocation || {};
          var tool = toolLabel(ti.toolName);
          var line = ti.state === 'call' ? tool + '…' : ti.state === 'result' ? '✓ ' + tool + ': ' + ((ti.result || {}).summary || '') : '✗ ' + tool + ': ' + (ti.error || '');
          answerOf(n).appendChild(el('p', { class: 'tool muted', text: line }));
          break;
        case 'pending-confirmation':
        case 'confirmation-resolved':
          onConfirmationEvent(data);
          break;
        case 'linked-finished':
          // A search, application or debate this conversation started has
          // ended: said as news at the end of the conversation.
          item(el('li', { class: 'assistant linked', 'data-turn': n, 'data-outcome': data.outcome || '' }, el('div', { class: 'text', text: data.message || '' })));
          break;
        case 'finish':
          var a = answerOf(n);
          a.setAttribute('data-finished', data.finishReason || 'stop');
          if (data.feedback && !a.querySelector('.feedback')) a.appendChild(feedback(n, data.feedback, data.delegated || ''));
          break;
        }
      };
    }
    connect();
  }

  // ---------------------------------------------------------------- confirmations

  var dialog = $('confirm-dialog');
  function showRow(id, show) { $(id).hidden = !show; }
  // openConfirmation asks a confirmation in the modal, in words: what is
  // decided, about which search and candidate, the preview as labelled
  // sections, links to the report and the sources (which close the modal:
  // the report page decides beside the report).
  function openConfirmation(c) {
    openConfirmation.current = c;
    var a = about(c);
    $('cf-question').textContent = has('question', c.toolName) ? L('question', c.toolName) : 'Se pide su visto bueno antes de seguir.';
    $('cf-tool').textContent = c.toolName ? L('tool', c.toolName) : '—';
    $('cf-category').textContent = c.category ? L('category', c.category) : '—';
    $('cf-sensitivity').textContent = c.sensitivity ? L('sensitivity', c.sensitivity) : '—';
    $('cf-undoable').textContent = c.undoable ? 'sí' : 'no';
    $('cf-expires').textContent = when(c.expires_at);
    $('cf-search').textContent = a.search;
    $('cf-candidate').textContent = a.cid;
    showRow('cf-search-row', !!a.search);
    showRow('cf-candidate-row', !!a.cid);
    var links = $('cf-links');
    links.replaceChildren();
    links.hidden = !(a.search && a.cid);
    if (a.search && a.cid) {
      links.appendChild(el('a', { id: 'cf-report-link', href: '#/informe/' + enc(a.search) + '/' + enc(a.cid), text: 'Abrir el informe de ' + a.cid + ' (puede decidir desde allí)' }));
      roster(a.search).then(function (ro) {
        if (!ro || openConfirmation.current !== c) return;
        var sub = [ro.role, ro.client].filter(Boolean).join(' · ');
        $('cf-search').textContent = a.search + (sub ? ' — ' + sub : '');
        $('cf-candidate').textContent = candidateName(ro, a.cid);
        var cand = (ro.candidates || []).filter(function (x) { return x.candidate_id === a.cid; })[0];
        if (cand && cand.documents && cand.documents.length) {
          links.appendChild(el('span', { class: 'sources' }, ' · Fuentes: ', cand.documents.map(function (d, i) {
            return [i ? ', ' : '', el('a', { href: '#/fuente/' + enc(a.search) + '/' + d.split('/').map(enc).join('/'), text: d.split('/').pop() })];
          })));
        }
      });
    }
    $('cf-preview').replaceChildren(previewOf(c.preview, a));
    $('cf-comment').value = '';
    $('cf-error').hidden = true;
    dialog.setAttribute('data-id', c.id);
    if (!dialog.open) dialog.showModal();
    $('cf-comment').focus();
  }
  function closeConfirmation(msg) {
    openConfirmation.current = null;
    dialog.removeAttribute('data-id');
    if (dialog.open) dialog.close();
    if (msg) notify(msg);
  }
  // onConfirmationEvent handles a stream's pending-confirmation and
  // confirmation-resolved (a run's or a conversation's). A replayed stream
  // repeats confirmations resolved long ago: ask only for those still
  // pending. The report page of the candidate asked about decides beside
  // the report; the modal never opens over it.
  function onConfirmationEvent(data) {
    if (data.type === 'confirmation-resolved') {
      resolvedIds[data.id] = true;
      refreshBadge();
      confirmationResolved(data.id, data.approved);
      return;
    }
    refreshBadge().then(function () {
      var still = pending.filter(function (c) { return c.id === data.id; })[0];
      if (still && !resolvedIds[data.id] && !openConfirmation.current && !onReportOf(still)) openConfirmation(still);
    });
  }
  function onReportOf(c) {
    var cur = reportPage.current, a = about(c);
    return !!cur && document.body.contains(cur.box) && cur.search === a.search && cur.cid === a.cid;
  }
  function confirmationResolved(cid, approved) {
    var cur = openConfirmation.current;
    if (cur && cur.id === cid && !resolving) {
      closeConfirmation('La confirmación «' + L('tool', cur.toolName) + '» se resolvió en otra sesión (' + (approved ? 'aprobada' : 'rechazada') + ').');
    }
  }
  // previewOf shows a preview as labelled sections: each field under its
  // Spanish name, codes through the label table, lists as lists, a nested
  // object (the escalation package) as a section of its own.
  function previewOf(p, a) {
    if (p === null || p === undefined) return el('p', { class: 'muted', text: 'Sin detalle.' });
    if (typeof p !== 'object') return el('p', { text: String(p) });
    if (Array.isArray(p)) return listOf('', p);
    var rank = {};
    PREVIEW.order.forEach(function (k, i) { rank[k] = i + 1; });
    var keys = Object.keys(p).sort(function (x, y) {
      var rx = rank[x] || 1000, ry = rank[y] || 1000;
      return rx !== ry ? rx - ry : (x < y ? -1 : x > y ? 1 : 0);
    });
    var box = el('div', { class: 'sections' });
    var dl = el('dl');
    keys.forEach(function (k) {
      var v = p[k];
      // the search and the candidate head the modal already
      if (a && ((k === 'search_id' && v === a.search) || (k === 'candidate_id' && v === a.cid))) return;
      if (v && typeof v === 'object' && !Array.isArray(v)) {
        box.appendChild(el('section', { class: 'section', 'data-field': k }, el('h4', { text: L('preview_field', k) }), previewOf(v, a)));
        return;
      }
      dl.appendChild(el('dt', { 'data-field': k, text: L('preview_field', k) }));
      if (k === 'report' && a && a.search && a.cid) {
        dl.appendChild(el('dd', null, el('a', { href: '#/informe/' + enc(a.search) + '/' + enc(a.cid), text: 'Abrir el informe' })));
      } else if (Array.isArray(v)) {
        dl.appendChild(el('dd', null, v.length ? listOf(k, v) : '—'));
      } else {
        dl.appendChild(el('dd', { text: valueOf(k, v) }));
      }
    });
    if (dl.childNodes.length) box.insertBefore(dl, box.firstChild);
    return box;
  }
  function listOf(k, v) {
    return el('ul', null, v.map(function (it) { return el('li', null, it && typeof it === 'object' ? previewOf(it) : valueOf(k, it)); }));
  }
  function valueOf(k, v) {
    if (v === null || v === undefined || v === '') return '—';
    if (typeof v === 'boolean') return v ? 'sí' : 'no';
    var d = PREVIEW.values[k];
    return d && has(d, v) ? L(d, v) : String(v);
  }
  // decideConfirmation posts a decision; the principal is the token's.
  function decideConfirmation(c, approved, comment) {
    return api('POST', '/api/confirmations', { id: c.id, approved: approved, comment: comment }).then(function () {
      resolvedIds[c.id] = true;
      refreshBadge();
    }, function (e) {
      if (e.status === 409 || e.status === 404) {
        refreshBadge();
        throw new APIError(e.status, 'La confirmación ya no está pendiente: ' + e.message);
      }
      throw e;
    });
  }
  var resolving = false;
  function resolve(approved) {
    var c = openConfirmation.current;
    if (!c || resolving) return;
    resolving = true;
    decideConfirmation(c, approved, $('cf-comment').value.trim()).then(function () {
      resolving = false;
      closeConfirmation('Confirmación ' + (approved ? 'aprobada' : 'rechazada') + '.');
    }, function (e) {
      resolving = false;
      if (e.status === 409 || e.status === 404) {
        closeConfirmation(e.message);
        return;
      }
      $('cf-error').textContent = e.message;
      $('cf-error').hidden = false;
    });
  }
  $('cf-approve').addEventListener('click', function () { resolve(true); });
  $('cf-reject').addEventListener('click', function () { resolve(false); });
  $('cf-later').addEventListener('click', function () { closeConfirmation(); });
  dialog.addEventListener('cancel', function () { openConfirmation.current = null; dialog.removeAttribute('data-id'); });

  var pending = [];
  // Confirmations whose record could not be read: listed, never decided here.
  var damaged = [];
  // The server lists the oldest open confirmations; more: others wait.
  var morePending = false;
  // Confirmations seen resolved on a stream: a list read just before may
  // still call them pending.
  var resolvedIds = {};
  function refreshBadge() {
    if (!token) return Promise.resolve();
    return api('GET', '/api/confirmations').then(function (d) {
      pending = (d.confirmations || []).filter(function (c) { return (!c.status || c.status === 'pending') && !resolvedIds[c.id]; });
      damaged = (d.confirmations || []).filter(function (c) { return c.status === 'damaged'; });
      morePending = !!d.more;
      var b = $('badge');
      b.textContent = String(pending.length) + (morePending ? '+' : '');
      b.className = 'badge' + (pending.length ? ' on' : '');
      $('confirmations-link').setAttribute('aria-label', 'Confirmaciones: ' + pending.length + (morePending ? ' o más' : '') + ' pendientes');
      var cur = openConfirmation.current;
      if (cur && !resolving && !pending.some(function (c) { return c.id === cur.id; })) {
        closeConfirmation('La confirmación «' + L('tool', cur.toolName) + '» ya no está pendiente: se resolvió en otra sesión.');
      }
      if (location.hash === '#/confirmaciones') paintConfirmations();
      paintReportDecision();
    }, function () { /* the next poll retries */ });
  }
  function paintConfirmations() {
    var list = $('confirmations-list');
    if (!list) return;
    if (!pending.length && !damaged.length) {
      list.replaceChildren(el('div', { class: 'empty card', id: 'confirmations-empty' },
        el('p', null, el('strong', { text: 'No hay confirmaciones pendientes.' })),
        el('p', { text: 'Cuando una búsqueda escale a un candidato al consultor senior, o un flujo pida su visto bueno antes de seguir (enviar un correo, continuar una postulación, aceptar la decisión de un debate), la pregunta aparecerá aquí y en el contador de arriba.' })));
      return;
    }
    var body = el('tbody');
    damaged.forEach(function (c) {
      body.appendChild(el('tr', { 'data-id': c.id, class: 'damaged' },
        el('td', { text: 'Confirmación ' + c.id }), el('td', { class: 'hide-narrow', text: '—' }),
        el('td', { text: '—' }), el('td', { class: 'hide-narrow', text: when(c.created_at) }),
        el('td', { class: 'error', role: 'note', text: 'Registro dañado: no se puede decidir desde aquí; avise al operador.' })));
    });
    pending.forEach(function (c) {
      var a = about(c);
      var what = a.search ? (a.cid ? a.cid + ' en ' + a.search : a.search) : ((c.preview || {}).application_id || (c.preview || {}).debate_id || '—');
      var cell = el('td', { class: 'hide-narrow', text: what });
      if (a.search && a.cid) {
        roster(a.search).then(function (ro) { if (ro) cell.textContent = candidateName(ro, a.cid) + ' en ' + a.search; });
      }
      body.appendChild(el('tr', { 'data-id': c.id },
        el('td', { text: L('tool', c.toolName) }), cell,
        el('td', { text: L('sensitivity', c.sensitivity) }),
        el('td', { class: 'hide-narrow', text: when(c.created_at) }),
        el('td', null, el('button', { type: 'button', class: 'primary', text: 'Revisar', onclick: function () { openConfirmation(c); } }))));
    });
    list.replaceChildren(el('div', { class: 'scroll' }, el('table', null,
      el('thead', null, el('tr', null, el('th', { text: 'Pregunta' }), el('th', { text: 'Sobre', class: 'hide-narrow' }),
        el('th', { text: 'Sensibilidad' }), el('th', { text: 'Creada', class: 'hide-narrow' }), el('th'))),
      body)));
    if (morePending) {
      list.appendChild(el('p', { class: 'muted', text: 'Hay más confirmaciones pendientes: estas son las más antiguas; las demás aparecen a medida que se resuelven.' }));
    }
  }
  function confirmationsPage() {
    main.replaceChildren(el('h1', { text: 'Confirmaciones pendientes' }), el('div', { id: 'confirmations-list' }, el('p', { class: 'muted', text: 'Cargando…' })));
    refreshBadge();
  }

  // ---------------------------------------------------------------- routing

  function route() {
    while (cleanup.length) cleanup.pop()();
    // A confirmation is asked about the page it was opened on: leaving it
    // closes the modal (it stays pending, in the badge).
    if (openConfirmation.current || dialog.open) closeConfirmation();
    reportPage.current = null;
    if (!token) {
      $('tenant').textContent = '';
      signInPage();
      return;
    }
    $('nav').hidden = false;
    $('tenant').textContent = 'Organización: ' + tenant();
    $('tenant').setAttribute('title', 'Sesión de ' + ((tenantOf(token) || {}).sub || '') + ' en la organización ' + tenant());
    var parts = location.hash.replace(/^#\/?/, '').split('/').map(function (p) {
      try { return decodeURIComponent(p); } catch (e) { return ''; }
    });
    switch (parts[0]) {
    case 'ejecucion': runPage(parts[1], parts[2], parts[3] || parts[2]); break;
    case 'informe': reportPage(parts[1], parts[2]); break;
    case 'resumen': summaryPage(parts[1]); break;
    case 'fuente': sourcePage(parts[1], parts.slice(2).join('/')); break;
    case 'confirmaciones': confirmationsPage(); break;
    case 'conversacion': chatPage(parts[1]); break;
    default: runsPage();
    }
    main.focus({ preventScroll: true });
  }

  // An identity provider's redirect (OIDC implicit flow, e.g. Cognito's
  // hosted UI) brings the token in the fragment: #id_token=…&access_token=….
  // The ID token carries the tenant claim; it is kept like a pasted one and
  // the fragment is cleared from the address bar and the history.
  (function tokenFromRedirect() {
    if (!/^#(?!\/)/.test(location.hash)) return;
    var p = new URLSearchParams(location.hash.slice(1));
    var t = p.get('id_token') || p.get('access_token');
    if (!t || !tenantOf(t)) return;
    token = t;
    sessionStorage.setItem(TOKEN_KEY, token);
    history.replaceState(null, '', location.pathname + location.search + '#/');
  })();

  $('signout').addEventListener('click', function () { signOut('Sesión cerrada.'); });
  window.addEventListener('hashchange', function () { notify(''); route(); });
  setInterval(refreshBadge, 5000);
  route();
  refreshBadge();
})();
