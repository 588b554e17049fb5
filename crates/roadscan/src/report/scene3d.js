// roadscan report: the 3D view of the scene (plain WebGL 1, no libraries, no network).
// Voxel centres as points coloured by class and the road surface as a mesh, from base64
// arrays in the page; drag to orbit, wheel to zoom, double-click to reset.
(function () {
  'use strict';
  var box = document.getElementById('scene3d');
  var canvas = document.getElementById('scene3d-canvas');
  if (!box || !canvas) { return; }

  function fail(why) {
    var p = document.createElement('p');
    p.className = 'none';
    p.textContent = 'No 3D view: ' + why + '. scene.glb holds the same voxels for any glTF viewer.';
    box.replaceChild(p, canvas);
  }

  function bytes(id) {
    var el = document.getElementById(id);
    var s = atob(el ? el.textContent.replace(/\s+/g, '') : '');
    var out = new Uint8Array(s.length);
    for (var i = 0; i < s.length; i++) { out[i] = s.charCodeAt(i); }
    return out;
  }

  function floats(id) {
    var b = bytes(id);
    return new Float32Array(b.buffer, 0, Math.floor(b.length / 4));
  }

  var gl = null;
  try {
    gl = canvas.getContext('webgl', { antialias: true }) || canvas.getContext('experimental-webgl');
  } catch (e) {
    gl = null;
  }
  if (!gl) { fail('this browser offers no WebGL'); return; }

  var points = floats('scene3d-points');
  var colours = bytes('scene3d-colours');
  var road = floats('scene3d-road');

  // The road's triangles, shaded by their slope toward a light from above and the south-west.
  var roadColours = new Uint8Array(road.length);
  var light = [-0.3, -0.4, 0.87];
  for (var t = 0; t + 8 < road.length; t += 9) {
    var ux = road[t + 3] - road[t], uy = road[t + 4] - road[t + 1], uz = road[t + 5] - road[t + 2];
    var vx = road[t + 6] - road[t], vy = road[t + 7] - road[t + 1], vz = road[t + 8] - road[t + 2];
    var nx = uy * vz - uz * vy, ny = uz * vx - ux * vz, nz = ux * vy - uy * vx;
    var len = Math.sqrt(nx * nx + ny * ny + nz * nz) || 1;
    var lit = Math.abs((nx * light[0] + ny * light[1] + nz * light[2]) / len);
    var g = Math.round(120 + 100 * lit);
    for (var k = 0; k < 9; k++) { roadColours[t + k] = k % 3 === 2 ? Math.min(255, g + 6) : g; }
  }

  var vs = 'attribute vec3 p; attribute vec3 c; uniform mat4 m; uniform float size; varying vec3 col;' +
    'void main() { gl_Position = m * vec4(p, 1.0); gl_PointSize = size / gl_Position.w; col = c; }';
  var fs = 'precision mediump float; varying vec3 col; void main() { gl_FragColor = vec4(col, 1.0); }';

  function shader(kind, text) {
    var s = gl.createShader(kind);
    gl.shaderSource(s, text);
    gl.compileShader(s);
    return gl.getShaderParameter(s, gl.COMPILE_STATUS) ? s : null;
  }
  var v = shader(gl.VERTEX_SHADER, vs), f = shader(gl.FRAGMENT_SHADER, fs);
  if (!v || !f) { fail('its WebGL could not compile the shaders'); return; }
  var prog = gl.createProgram();
  gl.attachShader(prog, v);
  gl.attachShader(prog, f);
  gl.linkProgram(prog);
  if (!gl.getProgramParameter(prog, gl.LINK_STATUS)) { fail('its WebGL could not link the shaders'); return; }
  gl.useProgram(prog);
  var aP = gl.getAttribLocation(prog, 'p'), aC = gl.getAttribLocation(prog, 'c');
  var uM = gl.getUniformLocation(prog, 'm'), uSize = gl.getUniformLocation(prog, 'size');

  function buffer(data) {
    var b = gl.createBuffer();
    gl.bindBuffer(gl.ARRAY_BUFFER, b);
    gl.bufferData(gl.ARRAY_BUFFER, data, gl.STATIC_DRAW);
    return b;
  }
  var layers = [
    { p: buffer(points), c: buffer(colours), n: points.length / 3, mode: gl.POINTS },
    { p: buffer(road), c: buffer(roadColours), n: road.length / 3, mode: gl.TRIANGLES }
  ];

  // The scene's extent sets the first view.
  var lo = [Infinity, Infinity, Infinity], hi = [-Infinity, -Infinity, -Infinity];
  [points, road].forEach(function (a) {
    for (var i = 0; i + 2 < a.length; i += 3) {
      for (var j = 0; j < 3; j++) { lo[j] = Math.min(lo[j], a[i + j]); hi[j] = Math.max(hi[j], a[i + j]); }
    }
  });
  if (!isFinite(lo[0])) { fail('there is nothing to show'); return; }
  var centre = [0, 1, 2].map(function (j) { return 0.5 * (lo[j] + hi[j]); });
  var radius = 0.5 * Math.sqrt(Math.pow(hi[0] - lo[0], 2) + Math.pow(hi[1] - lo[1], 2) + Math.pow(hi[2] - lo[2], 2)) || 10;
  var view = {};
  function reset() { view.yaw = -0.6; view.pitch = 0.55; view.dist = 1.45 * radius; }
  reset();

  function perspective(fovy, aspect, near, far) {
    var f = 1 / Math.tan(fovy / 2), nf = 1 / (near - far);
    return [f / aspect, 0, 0, 0, 0, f, 0, 0, 0, 0, (far + near) * nf, -1, 0, 0, 2 * far * near * nf, 0];
  }
  function lookAt(eye, at, up) {
    var z = norm(sub(eye, at)), x = norm(cross(up, z)), y = cross(z, x);
    return [x[0], y[0], z[0], 0, x[1], y[1], z[1], 0, x[2], y[2], z[2], 0,
      -dot(x, eye), -dot(y, eye), -dot(z, eye), 1];
  }
  function mul(a, b) {
    var out = new Array(16);
    for (var c = 0; c < 4; c++) {
      for (var r = 0; r < 4; r++) {
        var s = 0;
        for (var k = 0; k < 4; k++) { s += a[k * 4 + r] * b[c * 4 + k]; }
        out[c * 4 + r] = s;
      }
    }
    return out;
  }
  function sub(a, b) { return [a[0] - b[0], a[1] - b[1], a[2] - b[2]]; }
  function dot(a, b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
  function cross(a, b) { return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]; }
  function norm(a) { var l = Math.sqrt(dot(a, a)) || 1; return [a[0] / l, a[1] / l, a[2] / l]; }

  var size = parseFloat(box.getAttribute('data-size')) || 1;
  var queued = false;
  function draw() {
    queued = false;
    var w = canvas.width, h = canvas.height;
    gl.viewport(0, 0, w, h);
    gl.clearColor(0.97, 0.97, 0.98, 1);
    gl.clear(gl.COLOR_BUFFER_BIT | gl.DEPTH_BUFFER_BIT);
    gl.enable(gl.DEPTH_TEST);
    var cp = Math.cos(view.pitch);
    var eye = [centre[0] + view.dist * cp * Math.cos(view.yaw), centre[1] + view.dist * cp * Math.sin(view.yaw),
      centre[2] + view.dist * Math.sin(view.pitch)];
    var m = mul(perspective(0.8, w / h, radius * 0.01, radius * 20), lookAt(eye, centre, [0, 0, 1]));
    gl.uniformMatrix4fv(uM, false, new Float32Array(m));
    // A voxel's width on screen at its distance (points are squares of that many pixels).
    gl.uniform1f(uSize, Math.max(2, size * h / (2 * Math.tan(0.4))));
    layers.forEach(function (l) {
      if (l.n < 1) { return; }
      gl.bindBuffer(gl.ARRAY_BUFFER, l.p);
      gl.enableVertexAttribArray(aP);
      gl.vertexAttribPointer(aP, 3, gl.FLOAT, false, 0, 0);
      gl.bindBuffer(gl.ARRAY_BUFFER, l.c);
      gl.enableVertexAttribArray(aC);
      gl.vertexAttribPointer(aC, 3, gl.UNSIGNED_BYTE, true, 0, 0);
      gl.drawArrays(l.mode, 0, l.n);
    });
  }
  function redraw() {
    if (!queued) { queued = true; window.requestAnimationFrame(draw); }
  }

  var drag = null;
  canvas.addEventListener('mousedown', function (e) {
    drag = { x: e.clientX, y: e.clientY };
    canvas.style.cursor = 'grabbing';
    e.preventDefault();
  });
  window.addEventListener('mouseup', function () { drag = null; canvas.style.cursor = 'grab'; });
  window.addEventListener('mousemove', function (e) {
    if (!drag) { return; }
    view.yaw -= (e.clientX - drag.x) * 0.008;
    view.pitch = Math.max(-0.2, Math.min(1.55, view.pitch + (e.clientY - drag.y) * 0.008));
    drag = { x: e.clientX, y: e.clientY };
    redraw();
  });
  canvas.addEventListener('wheel', function (e) {
    e.preventDefault();
    view.dist = Math.max(radius * 0.05, Math.min(radius * 8, view.dist * Math.exp(e.deltaY * 0.001)));
    redraw();
  }, { passive: false });
  canvas.addEventListener('dblclick', function () { reset(); redraw(); });
  canvas.addEventListener('webglcontextlost', function (e) { e.preventDefault(); fail('the WebGL context was lost'); });
  draw();
})();
