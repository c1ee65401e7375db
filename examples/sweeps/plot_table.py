"""Loads a sweep's table and plots a metric against a swept parameter, one line per value of
another parameter (the mean over seeds), with matplotlib if installed, else as text.

    python examples/sweeps/plot_table.py out/flash_gc iops flash.channels ftl.gc_policy
"""

import sys
from pathlib import Path

import nearflash.sweeps as sw


def main(out, metric, x, by=None):
    t = sw.table(out)
    keys = [x] + ([by] if by else [])
    means = t.groupby(keys)[metric].mean().reset_index()
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(means.to_string(index=False))
        return
    fig, ax = plt.subplots()
    for name, group in (means.groupby(by) if by else [(metric, means)]):
        ax.plot(group[x], group[metric], marker="o", label=f"{by} = {name}" if by else metric)
    ax.set_xlabel(x)
    ax.set_ylabel(metric)
    ax.legend()
    png = Path(out) / f"{metric}_vs_{x}.png"
    fig.savefig(png, dpi=120)
    print(f"wrote {png}")


if __name__ == "__main__":
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    main(*sys.argv[1:5])
