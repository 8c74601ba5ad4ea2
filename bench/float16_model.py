#!/usr/bin/env python3
"""A float16 copy of a float32 model, to time float16 models on the CPU (issue 31): every float
initializer and Constant stored as float16, one Cast in after each float input and one Cast back
before each float output, as onnxconverter-common's convert_float_to_float16 with
keep_io_types=True writes it for plain CNN graphs (it does not handle ops whose other inputs must
stay float32, such as Resize scales).

  python3 bench/float16_model.py IN.onnx OUT.onnx
"""
import sys, onnx, numpy as np
from onnx import helper, numpy_helper, TensorProto
m = onnx.load(sys.argv[1])
g = m.graph
for i, init in enumerate(g.initializer):
    if init.data_type == TensorProto.FLOAT:
        a = numpy_helper.to_array(init).astype(np.float16)
        g.initializer[i].CopyFrom(numpy_helper.from_array(a, init.name))
for n in g.node:
    if n.op_type == "Constant":
        for a in n.attribute:
            if a.name == "value" and a.t.data_type == TensorProto.FLOAT:
                a.t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(a.t).astype(np.float16), a.t.name))
inits = {i.name for i in g.initializer}
rename = {}
pre = []
for inp in g.input:
    if inp.name in inits or inp.type.tensor_type.elem_type != TensorProto.FLOAT: continue
    rename[inp.name] = inp.name + "_h"
    pre.append(helper.make_node("Cast", [inp.name], [inp.name + "_h"], to=TensorProto.FLOAT16, name="cast_in_" + inp.name))
post = []
for out in g.output:
    if out.type.tensor_type.elem_type != TensorProto.FLOAT: continue
    post.append(helper.make_node("Cast", [out.name + "_h"], [out.name], to=TensorProto.FLOAT, name="cast_out_" + out.name))
outs = {o.name for o in g.output}
nodes = []
for n in g.node:
    n.input[:] = [rename.get(x, x) for x in n.input]
    n.output[:] = [x + "_h" if x in outs else x for x in n.output]
    nodes.append(n)
del g.node[:]
g.node.extend(pre + nodes + post)
del g.value_info[:]
onnx.save(m, sys.argv[2])
print("saved", sys.argv[2])
