# Copyright The yeebench developers. See the LICENSE file at the top of the repository.
#
# SPDX-License-Identifier: BSD-3-Clause

import os

from spack.package import join_path


class ProjectFolderDevelop:
    """For this repository's recipes: spack.yaml develops the whole repository, so a develop build is
    redone only when the recipe's own project folder (root_cmakelists_dir) changed since the install,
    not when build outputs or another project elsewhere in the work tree did."""

    def detect_dev_src_change(self):
        manifest = join_path(self.prefix, ".spack", "install_manifest.json")
        if not os.path.isfile(manifest):
            return True
        installed = os.path.getmtime(manifest)
        project = join_path(self.spec.variants["dev_path"].value, self.root_cmakelists_dir)
        return any(
            os.path.getmtime(join_path(folder, name)) > installed
            for folder, dirs, files in os.walk(project)
            for name in [".", *dirs, *files]
        )
