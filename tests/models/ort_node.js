// onnxruntime-node seen from the Loom test and bench scripts: finding and
// loading it, and turning ONNX TensorProto files into its tensors and back.
//
// Node has no protobuf library, so this reads and writes the few TensorProto
// fields a dense tensor needs (dims, data_type, name, raw_data and the typed
// *_data fields on read). Every function throws an Error with a one-line
// message; callers decide how to report it.
'use strict';

const fs = require('fs');
const path = require('path');

// ONNX TensorProto.DataType -> [ort type name, TypedArray, element size]
const DTYPES = {
  1: ['float32', Float32Array, 4],
  2: ['uint8', Uint8Array, 1],
  3: ['int8', Int8Array, 1],
  4: ['uint16', Uint16Array, 2],
  5: ['int16', Int16Array, 2],
  6: ['int32', Int32Array, 4],
  7: ['int64', BigInt64Array, 8],
  9: ['bool', Uint8Array, 1],
  10: ['float16', Uint16Array, 2],
  11: ['float64', Float64Array, 8],
  12: ['uint32', Uint32Array, 4],
  13: ['uint64', BigUint64Array, 8],
};
const ORT_TO_ONNX = {};
for (const [code, [name]] of Object.entries(DTYPES)) ORT_TO_ONNX[name] = Number(code);

// ---------------------------------------------------------------- protobuf reading

class Reader {
  constructor(buf) { this.buf = buf; this.pos = 0; }
  done() { return this.pos >= this.buf.length; }
  varint() {  // as BigInt (int64 fields may be negative: 10-byte two's complement)
    let result = 0n, shift = 0n;
    for (;;) {
      if (this.pos >= this.buf.length) throw new Error('truncated varint');
      const b = this.buf[this.pos++];
      result |= BigInt(b & 0x7f) << shift;
      if (!(b & 0x80)) return result;
      shift += 7n;
      if (shift > 70n) throw new Error('bad varint');
    }
  }
  bytes() {
    const n = Number(this.varint());
    if (this.pos + n > this.buf.length) throw new Error('truncated field');
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }
  skip(wire) {
    if (wire === 0) this.varint();
    else if (wire === 1) this.pos += 8;
    else if (wire === 2) this.bytes();
    else if (wire === 5) this.pos += 4;
    else throw new Error(`unsupported wire type ${wire}`);
  }
}

// Reads a repeated scalar field, packed (wire 2) or not, appending to `out`.
function readRepeated(r, wire, fixedSize, decodeFixed, out) {
  if (wire === 2) {
    const sub = new Reader(r.bytes());
    while (!sub.done()) {
      if (fixedSize) {
        out.push(decodeFixed(sub.buf, sub.pos));
        sub.pos += fixedSize;
      } else {
        out.push(sub.varint());
      }
    }
  } else if (fixedSize) {
    out.push(decodeFixed(r.buf, r.pos));
    r.pos += fixedSize;
  } else {
    out.push(r.varint());
  }
}

const f32 = (b, p) => b.readFloatLE(p);  // b is a Buffer
const f64 = (b, p) => b.readDoubleLE(p);

function parseTensorProto(buf) {
  const r = new Reader(buf);
  const t = { dims: [], dataType: 0, name: '', raw: null, floats: [], ints32: [], ints64: [], doubles: [], uints64: [] };
  while (!r.done()) {
    const key = Number(r.varint());
    const field = key >>> 3, wire = key & 7;
    switch (field) {
      case 1: readRepeated(r, wire, 0, null, t.dims); break;
      case 2: t.dataType = Number(r.varint()); break;
      case 4: readRepeated(r, wire, 4, f32, t.floats); break;
      case 5: readRepeated(r, wire, 0, null, t.ints32); break;
      case 7: readRepeated(r, wire, 0, null, t.ints64); break;
      case 8: t.name = r.bytes().toString('utf8'); break;
      case 9: t.raw = r.bytes(); break;
      case 10: readRepeated(r, wire, 8, f64, t.doubles); break;
      case 11: readRepeated(r, wire, 0, null, t.uints64); break;
      case 13: throw new Error('external data is not supported');
      case 14: if (Number(r.varint()) !== 0) throw new Error('non-default data_location'); break;
      default: r.skip(wire);
    }
  }
  return t;
}

function toOrtTensor(ort, t, file) {
  const spec = DTYPES[t.dataType];
  if (!spec) throw new Error(`${file}: unsupported data_type ${t.dataType}`);
  const [typeName, Arr, size] = spec;
  const dims = t.dims.map((d) => Number(BigInt.asIntN(64, d)));
  const count = dims.reduce((a, b) => a * b, 1);
  let data;
  if (t.raw) {
    if (t.raw.length !== count * size) throw new Error(`${file}: raw_data holds ${t.raw.length} bytes, expected ${count * size}`);
    data = new Arr(count);  // copy: the raw bytes may be unaligned
    new Uint8Array(data.buffer).set(t.raw);
  } else {
    let src;
    if (t.dataType === 1) src = t.floats;
    else if (t.dataType === 11) src = t.doubles;
    else if (t.dataType === 7) src = t.ints64.map((v) => BigInt.asIntN(64, v));
    else if (t.dataType === 13) src = t.uints64;
    else if (t.dataType === 12) src = t.uints64.map(Number);
    else src = t.ints32.map((v) => Number(BigInt.asIntN(32, v)));  // int32 and narrower, bool, float16 bits
    if (src.length !== count) throw new Error(`${file}: holds ${src.length} values, expected ${count}`);
    data = Arr.from(src);
  }
  if (typeName === 'bool') data = Uint8Array.from(data, (v) => (v ? 1 : 0));
  return new ort.Tensor(typeName, data, dims);
}

// ---------------------------------------------------------------- protobuf writing

function varintBytes(value) {  // value: BigInt >= 0 (negatives as 64-bit two's complement)
  let v = BigInt.asUintN(64, BigInt(value));
  const out = [];
  do {
    let b = Number(v & 0x7fn);
    v >>= 7n;
    if (v) b |= 0x80;
    out.push(b);
  } while (v);
  return Buffer.from(out);
}

function lenField(field, payload) {
  return Buffer.concat([varintBytes((field << 3) | 2), varintBytes(payload.length), payload]);
}

function serializeTensor(name, tensor) {
  const code = ORT_TO_ONNX[tensor.type];
  if (!code) throw new Error(`output ${name}: unsupported type ${tensor.type}`);
  const parts = [];
  if (tensor.dims.length) parts.push(lenField(1, Buffer.concat(tensor.dims.map((d) => varintBytes(d)))));
  parts.push(varintBytes(2 << 3), varintBytes(code));
  parts.push(lenField(8, Buffer.from(name, 'utf8')));
  const d = tensor.data;
  let raw = Buffer.from(d.buffer, d.byteOffset, d.byteLength);
  if (tensor.type === 'bool') raw = Buffer.from(Uint8Array.from(d, (v) => (v ? 1 : 0)));
  parts.push(lenField(9, raw));
  return Buffer.concat(parts);
}

// ---------------------------------------------------------------- loading

// onnxruntime-node from `ortDir`'s node_modules (empty: the usual Node
// resolution). The error says how to get it.
function loadOrt(ortDir) {
  try {
    const where = ortDir ? require.resolve('onnxruntime-node', { paths: [path.resolve(ortDir)] })
      : require.resolve('onnxruntime-node');
    return require(where);
  } catch (e) {
    throw new Error(`cannot load onnxruntime-node${ortDir ? ` from ${ortDir}` : ''} (run tests/models/fetch_models.sh): ${e.message.split('\n')[0]}`);
  }
}

// Reads `file` (a TensorProto) as an ort.Tensor; errors name the file.
function readTensorFile(ort, file) {
  let buf;
  try { buf = fs.readFileSync(file); } catch (e) { throw new Error(`cannot read ${file}: ${e.message}`); }
  try { return toOrtTensor(ort, parseTensorProto(buf), file); } catch (e) {
    throw new Error(e.message.startsWith(file) ? e.message : `${file}: ${e.message}`);
  }
}

// Reads `--input NAME=PATH.pb` pairs ([name, path]) into a feeds object.
function readFeeds(ort, inputs) {
  const feeds = {};
  for (const [name, file] of inputs) feeds[name] = readTensorFile(ort, file);
  return feeds;
}

module.exports = { loadOrt, readTensorFile, readFeeds, serializeTensor, parseTensorProto, toOrtTensor };
