// GET /map: the places of `locations` on a Leaflet map, clustered.
//
// The page asks the server only for the places in view: GET /locations with a `$geoWithin`
// `$box` of the visible bounds, in `_id` order, following the answer's `Link: rel="next"` page
// after page until `data-max-places` places are loaded. A whole collection is never fetched.
// Everything a place holds is shown as text (textContent), never parsed as HTML: a name such as
// `<img src=x onerror=alert(1)>` is shown as those characters. The page never writes.
'use strict';

(function () {
  const mapElement = document.getElementById('map');
  const countElement = document.getElementById('count');
  const noteElement = document.getElementById('note');
  const categoryInput = document.getElementById('category');
  const categoryList = document.getElementById('categories');
  const config = mapElement.dataset;
  const maxPlaces = Math.max(1, parseInt(config.maxPlaces, 10) || 5000);
  const pageSize = Math.max(1, parseInt(config.pageSize, 10) || 1000);
  const fields = 'name,placename,categories,details,imageId,location';
  const objectIdPattern = /^[0-9a-f]{24}$/;

  // For the browser test and for whoever looks: 'loading', 'ready' or 'error'.
  function setState(state) { document.body.dataset.state = state; }

  if (!window.L || !L.markerClusterGroup) {
    countElement.textContent = 'The map cannot be shown: Leaflet did not load (see the message above).';
    setState('error');
    return;
  }

  // The zoom range is the map's own, not the tile layer's: with no base map (`--map-tiles none`)
  // there is no layer to take it from, and the cluster plug-in needs a maximum zoom.
  const map = L.map(mapElement, { attributionControl: false, worldCopyJump: true, minZoom: 1, maxZoom: 19 });
  const cluster = L.markerClusterGroup({ maxClusterRadius: 60, spiderfyOnMaxZoom: true });
  map.addLayer(cluster);
  window.poiMap = { map: map, cluster: cluster };

  addBaseMap();
  restoreView();

  let current = null;     // the AbortController of the view being loaded
  let reloadTimer = null;
  const knownCategories = new Set();
  // The markers on the map by place id: a new view keeps the ones still in it, so a popup stays
  // open when the map pans (opening a popup near the edge pans it, which loads the view again).
  let markersById = new Map();

  map.on('moveend', function () {
    rememberView();
    scheduleLoad(250);
  });
  categoryInput.addEventListener('change', function () { scheduleLoad(0); });
  categoryInput.addEventListener('input', function () { scheduleLoad(600); });
  scheduleLoad(0);

  function addBaseMap() {
    const template = config.tiles;
    if (!template || template === 'none') return;
    const layer = L.tileLayer(template, { maxZoom: 19 });
    // Tiles that cannot load (offline, a blocked host) leave the places on the plain background.
    let failures = 0;
    layer.on('tileerror', function () {
      failures += 1;
      if (failures === 1) {
        const note = document.createElement('span');
        note.id = 'tiles-note';
        note.textContent = 'The base map cannot be loaded; the places are shown without it.';
        noteElement.after(note);
      }
    });
    layer.addTo(map);
    if (config.attribution) {
      const credit = L.control({ position: 'bottomright' });
      credit.onAdd = function () {
        const box = L.DomUtil.create('div', 'leaflet-control-attribution');
        const url = config.attributionUrl;
        const text = url && /^https?:\/\//.test(url) ? document.createElement('a') : document.createElement('span');
        if (text.tagName === 'A') { text.href = url; text.rel = 'noopener noreferrer'; text.target = '_blank'; }
        text.textContent = config.attribution;
        box.appendChild(text);
        return box;
      };
      credit.addTo(map);
    }
  }

  // `#zoom/lat/lon` in the address: a view can be shared, and reloading keeps it.
  function restoreView() {
    const parts = location.hash.slice(1).split('/').map(Number);
    if (parts.length === 3 && parts.every(Number.isFinite)) {
      map.setView([parts[1], parts[2]], parts[0]);
    } else {
      map.setView([20, 0], 2);
    }
  }

  function rememberView() {
    const c = map.getCenter();
    history.replaceState(null, '', '#' + map.getZoom() + '/' + c.lat.toFixed(5) + '/' + c.lng.toFixed(5));
  }

  function scheduleLoad(delay) {
    clearTimeout(reloadTimer);
    reloadTimer = setTimeout(loadView, delay);
  }

  // The visible bounds as `$box`es in [-180, 180]: one box, or two when the view crosses the
  // antimeridian, or the whole world when it shows more than one turn of it.
  function visibleBoxes() {
    const b = map.getBounds();
    const south = Math.max(-90, b.getSouth()), north = Math.min(90, b.getNorth());
    let west = b.getWest(), east = b.getEast();
    const round = function (v) { return Math.round(v * 1e6) / 1e6; };
    if (east - west >= 360) return [[[-180, round(south)], [180, round(north)]]];
    const shift = Math.floor((west + 180) / 360) * 360;
    west -= shift; east -= shift;
    if (east <= 180) return [[[round(west), round(south)], [round(east), round(north)]]];
    return [[[round(west), round(south)], [180, round(north)]], [[-180, round(south)], [round(east - 360), round(north)]]];
  }

  function viewQuery() {
    const boxes = visibleBoxes().map(function (box) { return { location: { $geoWithin: { $box: box } } }; });
    const query = boxes.length === 1 ? boxes[0] : { $or: boxes };
    const category = categoryInput.value.trim();
    if (category) query.categories = category;
    return query;
  }

  async function loadView() {
    if (current) current.abort();
    const controller = new AbortController();
    current = controller;
    setState('loading');
    countElement.textContent = 'Loading…';
    noteElement.textContent = '';
    const query = viewQuery();
    let url = '/locations?query=' + encodeURIComponent(JSON.stringify(query)) +
      '&fields=' + fields + '&sort=_id&limit=' + Math.min(pageSize, maxPlaces);
    const places = [];
    let more = false;
    try {
      while (url) {
        const response = await fetch(url, { headers: { Accept: 'application/json' }, signal: controller.signal });
        if (!response.ok) throw new Error(await errorText(response));
        const page = await response.json();
        for (const place of page) places.push(place);
        const next = nextLink(response.headers.get('Link'));
        if (next && places.length >= maxPlaces) { more = true; break; }
        url = next ? withLimit(next, Math.min(pageSize, maxPlaces - places.length)) : null;
      }
    } catch (error) {
      if (controller.signal.aborted) return;
      countElement.textContent = 'The places could not be loaded.';
      noteElement.textContent = String(error.message || error);
      setState('error');
      return;
    }
    if (controller.signal.aborted) return;
    show(places, more);
  }

  async function errorText(response) {
    try {
      const body = await response.json();
      if (body && typeof body.error === 'string') return 'The server answered ' + response.status + ': ' + body.error;
    } catch (_) { /* not JSON: the status says enough */ }
    return 'The server answered ' + response.status + '.';
  }

  // `</locations?…&after=…>; rel="next"`: only a path on this server is followed.
  function nextLink(header) {
    if (!header) return null;
    const match = /<([^>]*)>\s*;\s*rel="?next"?/.exec(header);
    if (!match || !match[1].startsWith('/') || match[1].startsWith('//')) return null;
    return match[1];
  }

  function withLimit(path, limit) {
    const url = new URL(path, location.origin);
    url.searchParams.set('limit', String(limit));
    return url.pathname + url.search;
  }

  function show(places, more) {
    const shown = new Map();
    const added = [];
    for (const place of places) {
      const key = idOf(place._id) || JSON.stringify(place);
      let marker = markersById.get(key);
      if (!marker) {
        marker = markerFor(place);
        if (!marker) continue;
        added.push(marker);
      }
      shown.set(key, marker);
      if (Array.isArray(place.categories)) {
        for (const c of place.categories) if (typeof c === 'string') knownCategories.add(c);
      }
    }
    const removed = [];
    for (const [key, marker] of markersById) if (!shown.has(key)) removed.push(marker);
    cluster.removeLayers(removed);
    cluster.addLayers(added);
    markersById = shown;
    updateCategoryList();
    const n = shown.size;
    if (more) {
      countElement.textContent = 'More than ' + n + ' places in view';
      noteElement.textContent = 'Showing the first ' + n + ' (the most one view loads); zoom in or choose a category to see them all.';
    } else {
      countElement.textContent = n === 1 ? '1 place in view' : n + ' places in view';
    }
    document.body.dataset.places = String(n);
    document.body.dataset.more = String(more);
    setState('ready');
  }

  function markerFor(place) {
    const coordinates = place.location && place.location.coordinates;
    if (!Array.isArray(coordinates) || coordinates.length < 2) return null;
    const lon = Number(coordinates[0]), lat = Number(coordinates[1]);
    if (!Number.isFinite(lon) || !Number.isFinite(lat)) return null;
    const marker = L.marker([lat, lon], { title: textOf(place.name) || '(no name)' });
    marker.bindPopup(function () { return popupFor(place, lat, lon, marker); }, { maxWidth: 320, minWidth: 200 });
    return marker;
  }

  function textOf(value) {
    if (value === undefined || value === null) return '';
    return typeof value === 'string' ? value : JSON.stringify(value);
  }

  function idOf(value) {
    if (value && typeof value === 'object' && typeof value.$oid === 'string') value = value.$oid;
    return typeof value === 'string' && objectIdPattern.test(value) ? value : null;
  }

  // Built with createElement and textContent only: nothing a place holds becomes markup.
  function popupFor(place, lat, lon, marker) {
    const box = document.createElement('div');
    box.className = 'poi-popup';
    const add = function (tag, className, text) {
      const element = document.createElement(tag);
      if (className) element.className = className;
      if (text !== undefined) element.textContent = text;
      box.appendChild(element);
      return element;
    };
    add('h3', 'name', textOf(place.name) || '(no name)');
    if (place.placename !== undefined) add('p', 'placename', textOf(place.placename));
    const categories = Array.isArray(place.categories) ? place.categories.map(textOf).join(', ') : textOf(place.categories);
    if (categories) add('p', 'categories', 'Categories: ' + categories);
    if (place.details !== undefined && place.details !== '') add('p', 'details', textOf(place.details));
    const imageId = idOf(place.imageId);
    if (imageId) {
      const image = add('img', 'thumbnail');
      image.alt = 'Photo of ' + (textOf(place.name) || 'the place');
      image.addEventListener('load', function () { const popup = marker.getPopup(); if (popup) popup.update(); });
      image.src = '/files/' + imageId + '/thumbnail';
    }
    add('p', 'where', lat.toFixed(5) + ', ' + lon.toFixed(5));
    const id = idOf(place._id);
    if (id) {
      const link = add('a', 'json', 'The place as JSON');
      link.href = '/locations/' + id;
    }
    return box;
  }

  function updateCategoryList() {
    const sorted = Array.from(knownCategories).sort().slice(0, 500);
    if (sorted.length === categoryList.options.length) return;
    categoryList.replaceChildren.apply(categoryList, sorted.map(function (c) {
      const option = document.createElement('option');
      option.value = c;
      return option;
    }));
  }
})();
