// Veredicto web console: plain JavaScript, no build step. It calls the
// project's HTTP API as any client does and follows each execution on its
// event stream (one EventSource). It never writes to the browser's console:
// reports and previews quote personal documents.
(function () {
  'use strict';

  var cfg = Object.assign({ api: '', events: '/api/events' }, window.VEREDICTO_CONFIG || {});
  var TOKEN_KEY = 'veredicto.token';
  var token = sessionStorage.getItem(TOKEN_KEY) || '';
  var main = document.getElementById('main');
  var cleanup = []; // run when the page changes: timers, streams
  var MAX_TIMELINE = 500; // execution-level steps kept on the page
  var STREAM_RETRIES = 10; // a closed stream of a running run is reopened at most this many times in a row

  var STATUS = {
    RUNNING: 'En curso', SUCCEEDED: 'Terminada', FAILED: 'Fallida', TIMED_OUT: 'Tiempo agotado',
    ABORTED: 'Detenida', PENDING: 'Pendiente'
  };
  var DECISION = {
    APROBADO: 'Aprobado', APROBADO_POR_CONSULTOR: 'Aprobado por el consultor senior',
    DESCARTADO_POR_CONSULTOR: 'Descartado por el consultor senior',
    ESCALADO_CONSULTOR_SENIOR: 'Escalado a consultor senior',
    DESCARTADO_GEM1: 'Descartado en GEM1', DESCARTADO_GEM2: 'Descartado en GEM2', DESCARTADO_GEM3: 'Descartado en GEM3'
  };
  var KIND = { search: 'Búsqueda', companion: 'Acompañamiento', debate: 'Debate', chat: 'Conversación', flags: 'Señales' };

  // ---------------------------------------------------------------- helpers

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
  function statusText(s) { return STATUS[s] || s || '—'; }
  function decisionText(d) { return DECISION[d] || d || ''; }
  function when(iso) {
    if (!iso) return '—';
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
  function fail(where) {
    return function (err) {
      if (err && err.status === 401) return;
      var msg = err && err.status === 404 ? 'No encontrado.' : (err && err.message) || 'Error de red.';
      where.replaceChildren(el('p', { class: 'error', role: 'alert', text: msg }));
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
    Object.keys(STATUS).forEach(function (s) { filter.appendChild(el('option', { value: s, text: STATUS[s] })); });
    var body = el('tbody', { id: 'runs-body' });
    var table = el('table', { id: 'runs-table' },
      el('thead', null, el('tr', null, el('th', { text: 'Tipo', class: 'hide-narrow' }), el('th', { text: 'Ejecución' }), el('th', { text: 'Estado' }),
        el('th', { text: 'Inicio', class: 'hide-narrow' }), el('th', { text: 'Duración' }), el('th', { text: 'Decisiones' }))),
      body);
    var status = el('p', { class: 'muted', 'aria-live': 'polite' });
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
        startErr.textContent = e.message;
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
    function paint() {
      var want = filter.value;
      var rows = runs.filter(function (r) { return !want || r.status === want; });
      body.replaceChildren.apply(body, rows.map(function (r) {
        var decisions = Object.keys(r.decisions || {}).sort().map(function (d) {
          return el('span', { class: 'chip decision d-' + d, text: decisionText(d) + ': ' + r.decisions[d] });
        });
        return el('tr', { 'data-status': r.status, 'data-id': r.id },
          el('td', { class: 'hide-narrow', text: KIND[r.kind] || r.kind }),
          el('td', null, el('a', { href: runHref(r), text: r.id })),
          el('td', { class: 'status s-' + r.status, text: statusText(r.status) }),
          el('td', { class: 'hide-narrow', text: when(r.started_at) }),
          el('td', { text: r.started_at ? duration(r.duration_seconds) : '—' }),
          el('td', null, el('div', { class: 'chips' }, decisions.length ? decisions : el('span', { class: 'muted', text: r.candidates ? r.candidates + ' en evaluación' : '—' }))));
      }));
      status.textContent = rows.length ? rows.length + ' de ' + runs.length + ' ejecuciones' : 'No hay ejecuciones' + (want ? ' con ese estado.' : '.');
    }
    filter.addEventListener('change', paint);
    function load() {
      return api('GET', '/runs').then(function (d) { runs = d.runs || []; paint(); }, fail(status));
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

  var TASK_LABEL = {
    Validate: 'Validación', Gem5: 'GEM5 mandato', Gem1: 'GEM1', Gem2: 'GEM2', Gem3: 'GEM3', Gem4: 'GEM4 QA',
    Correction: 'Corrección QA', Report: 'Informe', ReportReviewed: 'Informe final', Summary: 'Resumen',
    LookupReview: 'Consulta de revisión', AskReview: 'Revisión senior'
  };
  // Task states of other workflows are named by their function.
  function taskLabel(state, agent) {
    if (TASK_LABEL[state]) return TASK_LABEL[state];
    if (/Function$/.test(agent || '')) return state;
    return '';
  }
  // States that say where a candidate went: [chip class, label, gate passed].
  var OUTCOME = {
    DiscardedGem1: ['gate-out', 'No supera gate GEM1', false], DiscardedGem2: ['gate-out', 'No supera gate GEM2', false],
    DiscardedGem3: ['gate-out', 'No supera gate GEM3', false], Approved: ['gate-in', 'QA aprobado', true],
    Gem3Reask: ['retry', 'GEM3 re-pregunta', false], NextQAAttempt: ['qa', 'Re-auditoría QA', false],
    EscalatedAmbiguous: ['qa', 'Escalado: GEM3 ambiguo', false], EscalatedContradiction: ['qa', 'Escalado: contradicción', false],
    EscalatedNoEvidence: ['qa', 'Escalado: falta de evidencia', false], EscalatedQABlocks: ['qa', 'Escalado: bloqueos QA', false],
    TechnicalError: ['failed', 'Error técnico', false],
    ReviewApproved: ['gate-in', 'Revisión: aprobado', true], ReviewRejected: ['gate-out', 'Revisión: rechazado', false],
    ApprovedEarlier: ['gate-in', 'Revisión previa: aprobado', true], RejectedEarlier: ['gate-out', 'Revisión previa: rechazado', false],
    ReviewExpired: ['failed', 'Revisión vencida', false], ReviewPending: ['qa', 'Revisión pendiente', false],
    ReviewUnavailable: ['failed', 'Revisión no disponible', false]
  };

  function runPage(kind, id, execution) {
    var isSearch = kind === 'search';
    var statusEl = el('span', { id: 'run-status', class: 'status s-PENDING', text: statusText('PENDING') });
    var counter = el('span', { id: 'run-events', class: 'counter', 'data-count': '0', text: '0 eventos' });
    var rowsBody = el('tbody', { id: 'candidates-body' });
    var candidates = el('section', { class: 'card', hidden: true },
      el('h2', { text: isSearch ? 'Candidatos' : 'Iteraciones' }),
      el('div', { class: 'scroll' }, el('table', { id: 'candidates' },
        el('thead', null, el('tr', null, el('th', { text: isSearch ? 'Candidato' : 'Elemento' }), el('th', { text: 'Etapas' }),
          el('th', { text: isSearch ? 'Decisión' : 'Resultado' }))),
        rowsBody)));
    var timeline = el('ul', { id: 'timeline', class: 'chips plain' });
    var summary = el('section', { id: 'summary', class: 'card', hidden: true });
    main.replaceChildren(
      el('p', null, el('a', { href: '#/', text: '← Ejecuciones' })),
      el('h1', null, (KIND[kind] || kind) + ' ' + id),
      el('p', null, 'Estado: ', statusEl, ' · ', counter),
      summary, candidates,
      el('section', { class: 'card' }, el('h2', { text: 'Pasos de la ejecución' }), timeline));

    var rows = {}; // by map item index
    var count = 0;
    function row(idx) {
      var r = rows[idx];
      if (r) return r;
      var name = el('td', { class: 'cand', text: 'Ítem ' + (Number(idx) + 1) });
      var chips = el('div', { class: 'chips' });
      var decision = el('td', { class: 'decision' });
      var tr = el('tr', { 'data-item': idx }, name, el('td', null, chips), decision);
      candidates.hidden = false;
      // Keep rows in item order.
      var next = null;
      Object.keys(rows).forEach(function (k) {
        if (Number(k) > Number(idx) && (!next || Number(k) < Number(next.getAttribute('data-item')))) next = rows[k].tr;
      });
      rowsBody.insertBefore(tr, next);
      r = rows[idx] = { tr: tr, name: name, chips: chips, decision: decision, running: {}, runs: {}, gate: null };
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
    }
    function onStep(st) {
      var m = st.metadata || {};
      var scope = /item\[(\d+)\]/.exec(m.scope || '');
      if (!scope && st.action && st.action.indexOf('iteration-') === 0 && m.index !== undefined) {
        row(m.index); // a candidate entered the Map
        return;
      }
      if (!scope) {
        var label = (TASK_LABEL[m.state] || m.state || st.agent) + ' · ' + actionText(st);
        timeline.appendChild(el('li', { class: 'chip ' + chipClass(st.action), text: label }));
        while (timeline.childNodes.length > MAX_TIMELINE) timeline.removeChild(timeline.firstChild);
        return;
      }
      var r = row(scope[1]);
      if (m.candidate_id && r.name.textContent !== m.candidate_id) {
        r.name.textContent = m.candidate_id;
        r.tr.setAttribute('data-candidate', m.candidate_id);
      }
      var state = m.state || st.agent;
      // A gate's outcome is the state it routes to.
      if (r.gate && st.action === 'started') {
        var passed = OUTCOME[state] ? OUTCOME[state][2] : true;
        r.gate.className = 'chip ' + (passed ? 'gate-in' : 'gate-out');
        r.gate.textContent = r.gate.getAttribute('data-state') + (passed ? ' supera' : ' no supera');
        r.gate = null;
      }
      if (m.decision && m.candidate_id) setDecision(r, m.decision, m.candidate_id);
      if (OUTCOME[state] && st.action === 'started') {
        chip(r.chips, OUTCOME[state][0], OUTCOME[state][1], state);
        if (/^Escalated/.test(state)) setDecision(r, 'ESCALADO_CONSULTOR_SENIOR');
        return;
      }
      if (/Gate$/.test(state) || /^Gate\d/.test(state)) {
        if (st.action === 'finished') r.gate = chip(r.chips, '', state.replace('QAGate', 'Gate QA'), state.replace('QAGate', 'Gate QA'));
        return;
      }
      // Searches show their agents; other workflows every state.
      var label = isSearch ? taskLabel(state, st.agent) : (TASK_LABEL[state] || state);
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
            el('td', null, el('a', { href: '#/informe/' + enc(id) + '/' + enc(c.candidate_id), text: c.candidate_id })),
            el('td', { class: 'decision d-' + c.decision, text: decisionText(c.decision) }),
            el('td', { class: 'hide-narrow', text: c.reason || '' })));
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
      notify('Se perdió la conexión con el flujo de eventos de ' + id + '.');
    }
    function onMessage(ev) {
      retries = 0;
      if (ev.lastEventId) lastId = ev.lastEventId;
      var data;
      try { data = JSON.parse(ev.data); } catch (e) { return; }
      count++;
      counter.setAttribute('data-count', String(count));
      counter.setAttribute('data-last-id', ev.lastEventId || '');
      counter.textContent = count + (count === 1 ? ' evento' : ' eventos');
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
        es.close();
        loadSummary();
        break;
      }
    }
    connect();
  }
  function actionText(st) {
    var m = st.metadata || {};
    switch (st.action) {
    case 'started': return 'inicia';
    case 'finished': return 'termina' + (m.score !== undefined ? ' (' + m.score + ')' : '');
    case 'retried': return 'reintento ' + (m.attempt || '');
    case 'failed': return 'falla' + (m.error ? ' (' + m.error + ')' : '');
    case 'succeeded': return 'termina con éxito';
    case 'timed-out': return 'tiempo agotado';
    case 'aborted': return 'detenida';
    }
    return st.action || '';
  }
  function chipClass(action) {
    return { started: 'running', finished: 'done', succeeded: 'done', failed: 'failed', 'timed-out': 'failed', aborted: 'failed', retried: 'retry' }[action] || '';
  }

  // ---------------------------------------------------------------- documents

  function documentPage(title, back, path) {
    var box = el('div', { class: 'report', id: 'document' }, el('p', { class: 'muted', text: 'Cargando…' }));
    main.replaceChildren(el('p', null, back), el('h1', { class: 'sr-title', text: title }), box);
    api('GET', path, undefined, 'text/html').then(function (html) {
      // The API renders Markdown with every character of the document
      // escaped (internal/markdown); only its own tags and links remain.
      box.innerHTML = html;
    }, fail(box));
  }
  function reportPage(search, cid) {
    documentPage('Informe de ' + cid, el('a', { href: '#/', text: '← Volver', onclick: backToRun() }),
      '/searches/' + enc(search) + '/candidates/' + enc(cid) + '/report');
  }
  function summaryPage(search) {
    documentPage('Resumen de ' + search, el('a', { href: '#/', text: '← Ejecuciones' }), '/searches/' + enc(search) + '/summary');
  }
  function backToRun() {
    return function (ev) { ev.preventDefault(); history.back(); };
  }
  function sourcePage(search, source) {
    var pre = el('pre', { class: 'source', id: 'source', tabindex: 0 }, 'Cargando…');
    main.replaceChildren(el('p', null, el('a', { href: '#/', text: '← Volver', onclick: backToRun() })),
      el('h1', null, 'Fuente: ', el('code', { text: source })), pre);
    api('GET', '/searches/' + enc(search) + '/sources/' + source.split('/').map(enc).join('/'), undefined, 'text/plain')
      .then(function (text) { pre.textContent = text; }, fail(pre));
  }

  // ---------------------------------------------------------------- conversation

  // The delegation chat: each message is a turn (POST /api/chat); its
  // answer streams on the conversation's events. After each turn the page
  // asks «¿Faltó delegar?» (nothing was delegated) or «¿Era esto lo que
  // pedías?» (after a delegation): one click answers, with the agent it
  // should have gone to (POST /api/chat/feedback).
  var MAX_CHAT_ITEMS = 400; // transcript entries kept on the page
  var chatAgents = null; // GET /api/chat/agents, read once
  function chatPage(chatId) {
    if (!chatId || !/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/.test(chatId)) {
      location.hash = '#/conversacion/web-' + Date.now();
      return;
    }
    var log = el('ol', { id: 'chat-log', class: 'chat-log', 'aria-live': 'polite' });
    var input = el('textarea', { id: 'chat-input', rows: 2, required: true, maxlength: 8000, autocomplete: 'off' });
    var err = el('p', { class: 'error', role: 'alert', hidden: true });
    var turns = {}; // turn number → its answer's element
    function item(node) {
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
    main.replaceChildren(el('h1', { text: 'Conversación' }), el('p', { class: 'muted', text: 'Conversación ' + chatId + '.' }), log, form);
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
      (chatAgents ? Promise.resolve(chatAgents) : api('GET', '/api/chat/agents').then(function (d) { chatAgents = d.agents || []; return chatAgents; })).then(function (agents) {
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
          var line = ti.state === 'call' ? ti.toolName + '…' : ti.state === 'result' ? '✓ ' + ti.toolName + ': ' + ((ti.result || {}).summary || '') : '✗ ' + ti.toolName + ': ' + (ti.error || '');
          answerOf(n).appendChild(el('p', { class: 'tool muted', text: line }));
          break;
        case 'pending-confirmation':
        case 'confirmation-resolved':
          onConfirmationEvent(data);
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
  function openConfirmation(c) {
    openConfirmation.current = c;
    $('cf-tool').textContent = c.toolName || '—';
    $('cf-category').textContent = c.category || '—';
    $('cf-sensitivity').textContent = sensitivityLabel(c.sensitivity);
    $('cf-undoable').textContent = c.undoable ? 'sí' : 'no';
    $('cf-expires').textContent = when(c.expires_at);
    $('cf-preview').replaceChildren(previewOf(c.preview));
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
  // pending.
  function onConfirmationEvent(data) {
    if (data.type === 'confirmation-resolved') {
      resolvedIds[data.id] = true;
      refreshBadge();
      confirmationResolved(data.id, data.approved);
      return;
    }
    refreshBadge().then(function () {
      var still = pending.filter(function (c) { return c.id === data.id; })[0];
      if (still && !resolvedIds[data.id] && !openConfirmation.current) openConfirmation(still);
    });
  }
  function confirmationResolved(cid, approved) {
    var cur = openConfirmation.current;
    if (cur && cur.id === cid && !resolving) {
      closeConfirmation('La confirmación ' + (cur.toolName || '') + ' se resolvió en otra sesión (' + (approved ? 'aprobada' : 'rechazada') + ').');
    }
  }
  // previewOf shows a preview as a definition list of its fields, as text.
  function previewOf(p) {
    if (p === null || p === undefined) return el('p', { class: 'muted', text: 'Sin vista previa.' });
    if (typeof p !== 'object' || Array.isArray(p)) return el('pre', { text: JSON.stringify(p, null, 2) });
    var dl = el('dl');
    Object.keys(p).forEach(function (k) {
      var v = p[k];
      dl.appendChild(el('dt', { text: k }));
      dl.appendChild(el('dd', { text: typeof v === 'string' ? v : JSON.stringify(v, null, 2) }));
    });
    return dl;
  }
  var resolving = false;
  function resolve(approved) {
    var c = openConfirmation.current;
    if (!c || resolving) return;
    resolving = true;
    api('POST', '/api/confirmations', { id: c.id, approved: approved, comment: $('cf-comment').value.trim() }).then(function () {
      resolving = false;
      closeConfirmation('Confirmación ' + (approved ? 'aprobada' : 'rechazada') + '.');
      refreshBadge();
    }, function (e) {
      resolving = false;
      if (e.status === 409 || e.status === 404) {
        closeConfirmation('La confirmación ya no está pendiente: ' + e.message);
        refreshBadge();
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
        closeConfirmation('La confirmación ' + (cur.toolName || '') + ' ya no está pendiente: se resolvió en otra sesión.');
      }
      if (location.hash === '#/confirmaciones') paintConfirmations();
    }, function () { /* the next poll retries */ });
  }
  // The same Spanish word for a confirmation's sensitivity everywhere.
  function sensitivityLabel(s) {
    return { low: 'baja', medium: 'media', high: 'alta' }[s] || s || '—';
  }
  function paintConfirmations() {
    var list = $('confirmations-list');
    if (!list) return;
    if (!pending.length && !damaged.length) {
      list.replaceChildren(el('p', { class: 'muted', text: 'No hay confirmaciones pendientes.' }));
      return;
    }
    var body = el('tbody');
    damaged.forEach(function (c) {
      body.appendChild(el('tr', { 'data-id': c.id, class: 'damaged' },
        el('td', { text: 'Confirmación ' + c.id }), el('td', { class: 'hide-narrow', text: '—' }),
        el('td', { text: '—' }), el('td', { class: 'hide-narrow', text: '—' }),
        el('td', { class: 'hide-narrow', text: when(c.created_at) }),
        el('td', { class: 'error', role: 'note', text: 'Registro dañado: no se puede decidir desde aquí; avise al operador.' })));
    });
    pending.forEach(function (c) {
      var exec = (c.execution || '').split(':').pop();
      body.appendChild(el('tr', { 'data-id': c.id },
        el('td', { text: c.toolName }), el('td', { class: 'hide-narrow', text: c.category }),
        el('td', { text: sensitivityLabel(c.sensitivity) }), el('td', { class: 'hide-narrow', text: exec }),
        el('td', { class: 'hide-narrow', text: when(c.created_at) }),
        el('td', null, el('button', { type: 'button', class: 'primary', text: 'Revisar', onclick: function () { openConfirmation(c); } }))));
    });
    list.replaceChildren(el('div', { class: 'scroll' }, el('table', null,
      el('thead', null, el('tr', null, el('th', { text: 'Herramienta' }), el('th', { text: 'Categoría', class: 'hide-narrow' }),
        el('th', { text: 'Sensibilidad' }), el('th', { text: 'Ejecución', class: 'hide-narrow' }), el('th', { text: 'Creada', class: 'hide-narrow' }), el('th'))),
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
    if (!token) {
      signInPage();
      return;
    }
    $('nav').hidden = false;
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
