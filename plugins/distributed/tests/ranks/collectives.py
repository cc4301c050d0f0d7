"""Every collective of torchplug.distributed against values computed here in plain Python (run on N ranks).

Started by tests/test_multirank.py through torchplugrun; any mismatch raises, and the launcher reports the
rank and the assertion.  Inputs are functions of (rank, index), so each rank knows every rank's input.
"""

import math
from functools import reduce as fold

import torchplug as torch
import torchplug.distributed as dist

dist.init_process_group("gloo")
R, W = dist.get_rank(), dist.get_world_size()
N = 5
ReduceOp = dist.ReduceOp


def value(dtype, r, i):
    if dtype == torch.bool:
        return (r + i) % 3 == 0
    if dtype == torch.int64:
        return (r + 1) * (i + 2)
    return (r + 1) * (i + 1) / 4


def make(dtype, r, n=N, offset=0):
    return torch.tensor([value(dtype, r, i + offset) for i in range(n)], dtype=dtype)


def expected(dtype, op, n=N, offset=0):
    out = []
    for i in range(n):
        vals = [value(dtype, r, i + offset) for r in range(W)]
        if dtype == torch.bool:
            out.append(any(vals) if op in (ReduceOp.SUM, ReduceOp.MAX) else all(vals))
            continue
        out.append({ReduceOp.SUM: sum, ReduceOp.AVG: lambda v: sum(v) / W, ReduceOp.PRODUCT: math.prod,
                    ReduceOp.MIN: min, ReduceOp.MAX: max, ReduceOp.BAND: lambda v: fold(lambda a, b: a & b, v),
                    ReduceOp.BOR: lambda v: fold(lambda a, b: a | b, v),
                    ReduceOp.BXOR: lambda v: fold(lambda a, b: a ^ b, v)}[op](vals))
    return out


def check(got, want, what):
    got = got.tolist() if isinstance(got, torch.Tensor) else got
    if isinstance(want, list) and want and isinstance(want[0], float):
        ok = len(got) == len(want) and all(math.isclose(g, w, rel_tol=1e-6) for g, w in zip(got, want))
    else:
        ok = got == want
    assert ok, f"{what}: got {got}, expected {want}"


DTYPES = [torch.float32, torch.float64, torch.int64, torch.bool]
OPS = {torch.float32: [ReduceOp.SUM, ReduceOp.AVG, ReduceOp.PRODUCT, ReduceOp.MIN, ReduceOp.MAX],
       torch.float64: [ReduceOp.SUM, ReduceOp.AVG, ReduceOp.PRODUCT, ReduceOp.MIN, ReduceOp.MAX],
       torch.int64: [ReduceOp.SUM, ReduceOp.PRODUCT, ReduceOp.MIN, ReduceOp.MAX, ReduceOp.BAND, ReduceOp.BOR,
                     ReduceOp.BXOR],
       torch.bool: [ReduceOp.SUM, ReduceOp.PRODUCT, ReduceOp.MIN, ReduceOp.MAX]}

for dtype in DTYPES:
    for op in OPS[dtype]:
        x = make(dtype, R)
        dist.all_reduce(x, op=op)
        check(x, expected(dtype, op), f"all_reduce {dtype} {op.name}")
        for dst in range(W):
            x = make(dtype, R)
            dist.reduce(x, dst=dst, op=op)
            want = expected(dtype, op) if R == dst else make(dtype, R).tolist()
            check(x, want, f"reduce {dtype} {op.name} dst={dst}")
        out = torch.zeros(N, dtype=dtype)
        dist.reduce_scatter(out, [make(dtype, R, offset=k * N) for k in range(W)], op=op)
        check(out, expected(dtype, op, offset=R * N), f"reduce_scatter {dtype} {op.name}")
        out = torch.zeros(N, dtype=dtype)
        dist.reduce_scatter_tensor(out, make(dtype, R, n=N * W), op=op)
        check(out, expected(dtype, op, offset=R * N), f"reduce_scatter_tensor {dtype} {op.name}")
    for src in range(W):
        x = make(dtype, R) if R == src else torch.zeros(N, dtype=dtype)
        dist.broadcast(x, src=src)
        check(x, make(dtype, src).tolist(), f"broadcast {dtype} src={src}")
    outs = [torch.zeros(N, dtype=dtype) for _ in range(W)]
    dist.all_gather(outs, make(dtype, R))
    check([o.tolist() for o in outs], [make(dtype, r).tolist() for r in range(W)], f"all_gather {dtype}")
    out = torch.zeros(W, N, dtype=dtype)
    dist.all_gather_into_tensor(out, make(dtype, R))
    check(out, [make(dtype, r).tolist() for r in range(W)], f"all_gather_into_tensor {dtype}")
    for root in range(W):
        gl = [torch.zeros(N, dtype=dtype) for _ in range(W)] if R == root else None
        dist.gather(make(dtype, R), gl, dst=root)
        if R == root:
            check([g.tolist() for g in gl], [make(dtype, r).tolist() for r in range(W)], f"gather {dtype}")
        out = torch.zeros(N, dtype=dtype)
        dist.scatter(out, [make(dtype, r, offset=7) for r in range(W)] if R == root else None, src=root)
        check(out, make(dtype, R, offset=7).tolist(), f"scatter {dtype} src={root}")
    # all_to_all: rank r sends piece (r, k) of length k+1 to rank k
    outs = [torch.zeros(R + 1, dtype=dtype) for _ in range(W)]
    dist.all_to_all(outs, [make(dtype, R, n=k + 1, offset=k) for k in range(W)])
    check([o.tolist() for o in outs], [make(dtype, r, n=R + 1, offset=R).tolist() for r in range(W)],
          f"all_to_all {dtype}")

# dtypes MPI has no reduction type for (float16, bfloat16: reduced in float32), complex, and AVG on integers
for dtype in (torch.float16, torch.bfloat16):
    x = make(torch.float32, R).to(dtype)
    dist.all_reduce(x)
    check(x.float(), expected(torch.float32, ReduceOp.SUM), f"all_reduce {dtype}")
    assert x.dtype == dtype
z = torch.tensor([1 + 2j, R - 1j], dtype=torch.complex128)
dist.all_reduce(z)
assert z.tolist() == [W * (1 + 2j), sum(range(W)) - W * 1j], z
z = torch.tensor([complex(R, -R)], dtype=torch.complex64) if R == 1 else torch.zeros(1, dtype=torch.complex64)
dist.broadcast(z, src=1 % W)
assert z.tolist() == [complex(1 % W, -(1 % W))], z
base = torch.tensor([complex(R, 1)], dtype=torch.complex128)
view = base.conj()  # a lazily conjugated view is reduced by value and written back through the view
dist.all_reduce(view)
assert view.tolist() == [complex(sum(range(W)), -W)] and base.tolist() == [complex(sum(range(W)), W)], base
x = torch.tensor([R * 3 + 1, -(R * 3 + 1)], dtype=torch.int64)
dist.all_reduce(x, op=ReduceOp.AVG)  # truncated toward zero, as NCCL's integer AVG
total = sum(r * 3 + 1 for r in range(W))
check(x, [int(total / W), -int(total / W)], "all_reduce AVG int64")

# bitwise ops on floats are refused, as in PyTorch
for op in (ReduceOp.BAND, ReduceOp.BOR, ReduceOp.BXOR):
    try:
        dist.all_reduce(torch.ones(2), op=op)
    except RuntimeError as exc:
        assert "non-integral dtype" in str(exc), exc
    else:
        raise AssertionError(f"all_reduce {op.name} on float32 did not raise")

# all_to_all_single with uneven splits: rank r sends k+1 rows to rank k (rows of 2 values)
in_splits = [k + 1 for k in range(W)]
inp = torch.arange(sum(in_splits) * 2, dtype=torch.float64).reshape(-1, 2) + 100 * R
out_splits = [R + 1] * W
out = torch.zeros(sum(out_splits), 2, dtype=torch.float64)
dist.all_to_all_single(out, inp, out_splits, in_splits)
want = []
for r in range(W):
    start = sum(in_splits[:R])
    full = (torch.arange(sum(in_splits) * 2, dtype=torch.float64).reshape(-1, 2) + 100 * r)
    want += full[start:start + R + 1].tolist()
check(out, want, "all_to_all_single uneven")
out = torch.zeros(W * 2, dtype=torch.int64)
dist.all_to_all_single(out, torch.arange(W * 2, dtype=torch.int64) + 10 * R)
check(out, [10 * r + 2 * R + j for r in range(W) for j in range(2)], "all_to_all_single even")

# non-contiguous tensors are reduced in place too
base = torch.ones(4, 6)
view = base[:, ::2]
dist.all_reduce(view)
check(base[:, ::2].reshape(-1), [float(W)] * 12, "all_reduce non-contiguous")
check(base[:, 1::2].reshape(-1), [1.0] * 12, "all_reduce non-contiguous leaves the rest")

# async ops: Work.wait / is_completed / result
x = torch.full((1000,), float(R))
work = dist.all_reduce(x, async_op=True)
assert isinstance(work, dist.Work)
work.wait()
assert work.is_completed() and work.is_success()
check(x[:3], [float(sum(range(W)))] * 3, "async all_reduce")
y = [torch.full((3,), float(R)) for _ in range(3)]
works = [dist.broadcast(t, src=0, async_op=True) for t in y]
for w in works:
    w.wait()
check([t.tolist() for t in y], [[0.0] * 3] * 3, "async broadcasts")

# point to point: a ring, blocking and non-blocking, and batch_isend_irecv
nxt, prv = (R + 1) % W, (R - 1) % W
if W > 1:
    recv_buf = torch.zeros(3)
    if R % 2 == 0:
        dist.send(torch.full((3,), float(R)), nxt)
        dist.recv(recv_buf, prv)
    else:
        dist.recv(recv_buf, prv)
        dist.send(torch.full((3,), float(R)), nxt)
    check(recv_buf, [float(prv)] * 3, "send/recv ring")
    buf = torch.zeros(2, dtype=torch.int64)
    ws = [dist.isend(torch.tensor([R, 7], dtype=torch.int64), nxt, tag=3), dist.irecv(buf, prv, tag=3)]
    for w in ws:
        w.wait()
    check(buf, [prv, 7], "isend/irecv")
    buf = torch.zeros(4)
    ops = [dist.P2POp(dist.isend, torch.full((4,), R + 0.5), nxt), dist.P2POp(dist.irecv, buf, prv)]
    for w in dist.batch_isend_irecv(ops):
        w.wait()
    check(buf, [prv + 0.5] * 4, "batch_isend_irecv")
    if R == 0:
        got = set()
        for _ in range(W - 1):
            b = torch.zeros(1)
            got.add(dist.recv(b))  # any source: recv returns the sender
            assert b.item() == 40.0
        assert got == set(range(1, W)), got
    else:
        dist.send(torch.tensor([40.0]), 0)

# object collectives
objs = [None] * W
dist.all_gather_object(objs, {"rank": R, "name": f"r{R}"})
check(objs, [{"rank": r, "name": f"r{r}"} for r in range(W)], "all_gather_object")
lst = [1, "two", {"three": 3}] if R == 0 else [None, None, None]
dist.broadcast_object_list(lst, src=0)
check(lst, [1, "two", {"three": 3}], "broadcast_object_list")
gathered = [None] * W if R == 0 else None
dist.gather_object(("g", R), gathered, dst=0)
if R == 0:
    check(gathered, [("g", r) for r in range(W)], "gather_object")
received = [None]
dist.scatter_object_list(received, [f"for {r}" for r in range(W)] if R == 0 else None, src=0)
check(received, [f"for {R}"], "scatter_object_list")

# a subgroup of the even ranks (every rank calls new_group)
evens = list(range(0, W, 2))
sub = dist.new_group(evens)
if R in evens:
    assert dist.get_world_size(sub) == len(evens) and dist.get_rank(sub) == evens.index(R)
    x = torch.tensor([float(R)])
    dist.all_reduce(x, group=sub)
    check(x, [float(sum(evens))], "all_reduce on a subgroup")
    x = torch.tensor([float(R)])
    dist.broadcast(x, src=evens[-1], group=sub)  # src is a global rank
    check(x, [float(evens[-1])], "broadcast on a subgroup")
else:
    assert sub is dist.GroupMember.NON_GROUP_MEMBER and dist.get_rank(sub) == -1
dist.barrier()
dist.destroy_process_group()
assert not dist.is_initialized()
print(f"rank {R}: all collectives ok", flush=True)
