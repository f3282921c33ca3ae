"""Type-checks small Swift sources: on Linux against the built libraries (`linux_typecheck`), and against
the Apple SDKs with ../shared/tools/apple-typecheck (`typecheck`: each source becomes a target of a
temporary package beside the libraries' sources, and the tool's verdict for each target is returned).
Shared by .ci/check-snippets and .ci/check-compile-failures."""
import glob, os, re, shutil, subprocess, sys, tempfile


def linux_typecheck(caller):
    """The `swiftc -typecheck` command line that sees the libraries of the last `swift build` (exits
    naming `caller` when there is no build)."""
    build = subprocess.run(['swift', 'build', '--show-bin-path'], capture_output=True, text=True, check=True).stdout.strip()
    modules = os.path.join(build, 'Modules')
    maps = glob.glob(os.path.join(build, 'CCoalescingSupport.build', 'module.modulemap'))
    if not os.path.isdir(modules) or not maps:
        sys.exit(f'{caller}: build the package first (swift build)')
    return ['swiftc', '-typecheck', '-swift-version', '6', '-I', modules, '-Xcc', f'-fmodule-map-file={maps[0]}']

SDKS = (('ios', 'iPhoneOS26.2.sdk'), ('macos', 'MacOSX15.5.sdk'))
# Xcode 16's iOS SDK: what an app that still builds with it sees (no UIKit 26, no typed messages).
OLDER_IOS_SDK = ('ios', 'iPhoneOS18.6.sdk')


def installed_sdks(root, pairs=SDKS):
    """The (platform, SDK) pairs of `pairs` that apple-typecheck has installed; [] without the tool or the
    SDKs."""
    tool = os.path.join(root, '..', 'shared', 'tools', 'apple-typecheck')
    if not os.path.exists(tool):
        return []
    status = subprocess.run([tool, 'status'], capture_output=True, text=True).stdout
    return [(p, sdk) for p, sdk in pairs if f'{sdk}: installed' in status]


def platforms_for(code):
    """UIKit sources are checked for iOS only, AppKit ones for macOS only, the rest for both."""
    lines = [l.strip() for l in code.split('\n')]
    if 'import UIKit' in lines: return ('ios',)
    if 'import AppKit' in lines: return ('macos',)
    return ('ios', 'macos')


def typecheck(root, sources, extra_files=(), max_errors=5, sdks=SDKS):
    """sources: list of Swift source texts. Returns {index: [(platform, label, verdict, [error lines])]}
    for the platforms each source is meant for, against those of the (platform, SDK) pairs `sdks` that are
    installed, at the package's minimums. Exits if the libraries themselves fail."""
    tool = os.path.join(root, '..', 'shared', 'tools', 'apple-typecheck')
    platforms = re.search(r'platforms:\s*(\[[^\]]*\])', open(os.path.join(root, 'Package.swift')).read()).group(1)
    verdicts = {}
    with tempfile.TemporaryDirectory() as pkg:
        os.symlink(os.path.join(root, 'Sources'), os.path.join(pkg, 'Sources'))
        targets = [
            '.target(name: "CCoalescingSupport", path: "Sources/CCoalescingSupport")',
            '.target(name: "CoalescingRuntime", dependencies: ["CCoalescingSupport"], path: "Sources/CoalescingRuntime")',
            '.target(name: "NotificationCoalescing", dependencies: ["CoalescingRuntime", "CCoalescingSupport"], path: "Sources/NotificationCoalescing")',
            '.target(name: "UpdateContextCore", dependencies: ["CoalescingRuntime", "CCoalescingSupport"], path: "Sources/UpdateContextCore")',
            '.target(name: "UpdateContext", dependencies: ["UpdateContextCore", "NotificationCoalescing", "CoalescingRuntime", "CCoalescingSupport"], path: "Sources/UpdateContext")',
            '.target(name: "UpdateContextSwiftUI", dependencies: ["UpdateContext", "NotificationCoalescing"], path: "Sources/UpdateContextSwiftUI")',
            '.target(name: "UpdateContextCompatibility", dependencies: ["UpdateContext", "UpdateContextSwiftUI", "NotificationCoalescing", "CCoalescingSupport"], path: "Sources/UpdateContextCompatibility")',
        ]
        for index, code in enumerate(sources):
            d = os.path.join(pkg, 'Checked', f'Source{index}')
            os.makedirs(d)
            for extra in extra_files:
                shutil.copy(extra, os.path.join(d, os.path.basename(extra)))
            open(os.path.join(d, 'Source.swift'), 'w').write(code)
            targets.append(f'.target(name: "Source{index}", dependencies: ["UpdateContext", "UpdateContextCore", "UpdateContextSwiftUI", "UpdateContextCompatibility", "NotificationCoalescing"], path: "Checked/Source{index}")')
        open(os.path.join(pkg, 'Package.swift'), 'w').write(
            '// swift-tools-version:6.0\nimport PackageDescription\n\nlet package = Package(\n'
            f'    name: "AppleChecked",\n    platforms: {platforms},\n    targets: [\n        '
            + ',\n        '.join(targets) + '\n    ],\n    swiftLanguageModes: [.v6]\n)\n')
        env = dict(os.environ, MAX_ERRORS=str(max_errors))
        for platform, sdk in installed_sdks(root, sdks):
            out = subprocess.run([tool, 'check', pkg, platform, '', sdk], capture_output=True, text=True, env=env)
            if re.search(r'/ (CCoalescingSupport|CoalescingRuntime|NotificationCoalescing|UpdateContextCore|UpdateContext): FAILS', out.stdout):
                print(out.stdout)
                raise SystemExit(f'the libraries themselves do not type-check for {platform} against {sdk}')
            lines = out.stdout.split('\n')
            for i, l in enumerate(lines):
                m = re.match(r'^(\S+ \S+ \(\S+\)) / Source(\d+): (.*)$', l)
                if not m: continue
                index = int(m.group(2))
                if platform not in platforms_for(sources[index]): continue
                details = []
                for more in lines[i + 1:]:
                    if not more.startswith('    '): break
                    details.append(more.strip())
                verdicts.setdefault(index, []).append((platform, m.group(1), m.group(3), details))
    return verdicts
