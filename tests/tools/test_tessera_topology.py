"""Tests of scripts/tessera-topology (issue 15): topology.conf from ibnetdiscover output (real
formats in fixtures/ibnetdiscover, provenance in its README) and from NVLink domain lists.
Run: python3 -m pytest tests/tools (or ctest -R tessera_topology)."""
import importlib.machinery
import importlib.util
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SCRIPT = os.path.join(ROOT, 'scripts', 'tessera-topology')
FIX = os.path.join(HERE, 'fixtures', 'ibnetdiscover')

loader = importlib.machinery.SourceFileLoader('tessera_topology', SCRIPT)
spec = importlib.util.spec_from_loader('tessera_topology', loader)
tt = importlib.util.module_from_spec(spec)
loader.exec_module(tt)


def run(*args, stdin=None):
    p = subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True,
                       input=stdin)
    return p.returncode, p.stdout, p.stderr


def body(out):
    return [l for l in out.splitlines() if not l.startswith('# topology.conf') and
            not l.startswith('# from ')]


class Hostlists(unittest.TestCase):
    def test_expand_and_compress(self):
        self.assertEqual(tt.expand_hostlist('n[1-3,7],gpu[08-10]'),
                         ['n1', 'n2', 'n3', 'n7', 'gpu08', 'gpu09', 'gpu10'])
        self.assertEqual(tt.expand_hostlist('r[1-2]n[1-2]'), ['r1n1', 'r1n2', 'r2n1', 'r2n2'])
        self.assertEqual(tt.compress_hostlist(['n1', 'n2', 'n3', 'n7', 'x', 'gpu08', 'gpu09']),
                         'n[1-3,7],x,gpu[08-09]')
        with self.assertRaises(tt.InputError):
            tt.expand_hostlist('n[1-3')


class Tree(unittest.TestCase):
    def test_rdma_core_manpage_example_with_a_guid_map(self):
        # The 2007 Voltaire fabric of rdma-core's ibnetdiscover man page: HCAs carry the default
        # NodeDescription (no hostname), so a --node-map by GUID names them.
        with tempfile.NamedTemporaryFile('w', suffix='.map', delete=False) as m:
            m.write('# caguid  node\n0x8f10403960984 n1\nH-005442b100004900 n2\n'
                    '0x0008f10403961354 n3\n"MT23108 InfiniHost Mellanox Technologies" nX\n'
                    '0x8f10403960558 n4\n')
        rc, out, err = run('tree', os.path.join(FIX, 'rdma-core-manpage.out'),
                           '--node-map', m.name)
        os.unlink(m.name)
        self.assertEqual(rc, 0, err)
        # ISR9024 has n3 and both ports of n4's HCA; SW-6IB4 has n1, n2; they are cabled to each
        # other (no spine), so a root joins them.
        self.assertEqual(body(out), [
            'SwitchName=ISR9024_Voltaire Nodes=n[3-4]',
            'SwitchName=SW-6IB4_Voltaire Nodes=n[1-2]',
            'SwitchName=root Switches=ISR9024_Voltaire,SW-6IB4_Voltaire',
        ])

    def test_ibsim_net_file(self):
        rc, out, err = run('tree', os.path.join(FIX, 'ibsim-net.2sw2path4hca'),
                           '--hca-regex', r'^(Hca\d+)$')
        self.assertEqual(rc, 0, err)
        self.assertEqual(body(out), ['SwitchName=Switch1 Nodes=Hca[1,3]',
                                     'SwitchName=Switch2 Nodes=Hca[2,4]',
                                     'SwitchName=root Switches=Switch1,Switch2'])

    def test_fat_tree_hostnames_spines_and_sharp(self):
        rc, out, err = run('tree', os.path.join(FIX, 'fattree-synthetic.out'))
        self.assertEqual(rc, 0, err)
        self.assertEqual(body(out), [
            'SwitchName=MF0_spine-1_MQM8700_U1 Switches=MF0_leaf-1_MQM8700_U1,'
            'MF0_leaf-2_MQM8700_U1',
            'SwitchName=MF0_leaf-1_MQM8700_U1 Nodes=gpu[01-03]',
            'SwitchName=MF0_leaf-2_MQM8700_U1 Nodes=gpu[04-05]',
            '# MF0_spine-2_MQM8700_U1: no cluster node below it (a redundant spine or an unused '
            'switch)',
        ])
        self.assertIn('Aggregation Node" maps to no node name: left out', err)

    def test_nodes_filter_and_stdin(self):
        with open(os.path.join(FIX, 'fattree-synthetic.out')) as f:
            rc, out, err = run('tree', '-', '--nodes', 'gpu[01-02,04]', stdin=f.read())
        self.assertEqual(rc, 0, err)
        self.assertIn('SwitchName=MF0_leaf-1_MQM8700_U1 Nodes=gpu[01-02]', out)
        self.assertIn('SwitchName=MF0_leaf-2_MQM8700_U1 Nodes=gpu04', out)
        self.assertIn('gpu03 is not in --nodes: left out', err)

    def test_not_ibnetdiscover_output(self):
        with tempfile.NamedTemporaryFile('w', delete=False) as f:
            f.write('hello\n')
        rc, out, err = run('tree', f.name)
        os.unlink(f.name)
        self.assertEqual(rc, 1)
        self.assertIn(f.name + ': no switch found', err)
        self.assertEqual(out, '')

    def test_no_hca_maps(self):
        rc, _, err = run('tree', os.path.join(FIX, 'fattree-synthetic.out'),
                         '--hca-regex', '^(nomatch)')
        self.assertEqual(rc, 1)
        self.assertIn('no HCA maps to a cluster node', err)


class Blocks(unittest.TestCase):
    def test_domains_file(self):
        with tempfile.NamedTemporaryFile('w', delete=False) as f:
            f.write('# NVL72 racks\nrack1: gb[001-018]\ngb[019-036]\n')
        rc, out, err = run('block', '--domains', f.name, '--block-sizes', '18,36')
        os.unlink(f.name)
        self.assertEqual(rc, 0, err)
        self.assertEqual(body(out), ['BlockName=rack1 Nodes=gb[001-018]',
                                     'BlockName=block2 Nodes=gb[019-036]', 'BlockSizes=18,36'])

    def test_hostlist_and_domain_size(self):
        rc, out, err = run('block', '--nodes', 'n[1-10]', '--domain-size', '4', '--prefix', 'nvl')
        self.assertEqual(rc, 0, err)
        self.assertEqual(body(out), ['BlockName=nvl1 Nodes=n[1-4]', 'BlockName=nvl2 Nodes=n[5-8]',
                                     'BlockName=nvl3 Nodes=n[9-10]'])

    def test_bad_domains_name_file_and_line(self):
        with tempfile.NamedTemporaryFile('w', delete=False) as f:
            f.write('a: n[1-4]\nb: n[4-6]\n')
        rc, out, err = run('block', '--domains', f.name)
        self.assertEqual(rc, 1)
        self.assertIn(f.name + ':2: node n4 is already in block a', err)
        with open(f.name, 'w') as g:
            g.write('a: n[1-4\n')
        rc, out, err = run('block', '--domains', f.name)
        os.unlink(f.name)
        self.assertEqual(rc, 1)
        self.assertIn(f.name + ':1: unbalanced', err)


class AcceptedByTessera(unittest.TestCase):
    """The written files load in tessera-ctld --check-config (when the build is there)."""

    def test_check_config(self):
        ctld = os.path.join(os.environ.get('TESSERA_BUILD_DIR', os.path.join(ROOT, 'build')),
                            'bin', 'tessera-ctld')
        if not os.access(ctld, os.X_OK):
            self.skipTest('tessera-ctld not built')
        with tempfile.TemporaryDirectory() as d:
            conf = os.path.join(d, 'tessera.conf')
            with open(conf, 'w') as f:
                f.write('StateSaveLocation=%s\nTopologyPlugin=topology/tree\n'
                        'NodeName=gpu[01-05] CPUs=1\nPartitionName=p Nodes=ALL\n' % d)
            rc, _, err = run('tree', os.path.join(FIX, 'fattree-synthetic.out'), '-o',
                             os.path.join(d, 'topology.conf'))
            self.assertEqual(rc, 0, err)
            p = subprocess.run([ctld, '-f', conf, '--check-config'], capture_output=True,
                               text=True)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertIn('topology/tree OK (3 switches)', p.stdout)


if __name__ == '__main__':
    unittest.main()
